package main

import "testing"

func TestParseByteSizeUnits(t *testing.T) {
	cases := map[string]int64{"100": 100, "64KiB": 64 << 10, "1GiB": 1 << 30, "1gib": 1 << 30, "10kB": 10000, "2MB": 2e6, "7b": 7}
	for in, want := range cases {
		got, err := parseByteSize(in)
		if err != nil || got != want {
			t.Errorf("parseByteSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-1", "1.5MiB", "MiB", "12 parsecs"} {
		if _, err := parseByteSize(bad); err == nil {
			t.Errorf("parseByteSize(%q) accepted", bad)
		}
	}
}

func TestAppendPayloadHasExactSize(t *testing.T) {
	text := appendPayload(100, false)
	if len(text) != 100 || text[99] != '\n' {
		t.Fatalf("text payload: len %d, last %q", len(text), text[len(text)-1])
	}
	js := appendPayload(100, true)
	if len(js) != 100 || string(js[:6]) != `{"p":"` || string(js[98:]) != `"}` {
		t.Fatalf("json payload: len %d %q", len(js), js)
	}
}
