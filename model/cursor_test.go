package model

import (
	"testing"
	"time"
)

func TestNextCursor(t *testing.T) {
	now := time.Unix(CursorEpoch+20*1000+7, 0) // current interval 1000
	cases := []struct {
		client string
		jitter uint64
		want   string
	}{
		{"", 1, "1000"},
		{"abc", 1, "1000"},
		{"-5", 1, "1000"},
		{"+1000", 1, "1000"},
		{"999", 3600, "1000"},
		{"1000", 1, "1001"},    // ceil(1/20) = 1
		{"1000", 20, "1001"},   // ceil(20/20) = 1
		{"1000", 21, "1002"},   // ceil(21/20) = 2
		{"1000", 3600, "1180"}, // ceil(3600/20) = 180
		{"0001000", 1, "1001"}, // leading zeros: still the number 1000
		{"18446744073709551615", 1, "18446744073709551616"}, // 2^64-1: no wrap-around
		{"99999999999999999999999999", 40, "100000000000000000000000001"},
	}
	for _, c := range cases {
		if got := NextCursor(now, c.client, c.jitter); got != c.want {
			t.Errorf("NextCursor(cursor=%q, jitter=%d) = %s, want %s", c.client, c.jitter, got, c.want)
		}
	}
}

func TestCursorSteers(t *testing.T) {
	now := time.Unix(CursorEpoch+20*1000, 0)
	for client, want := range map[string]bool{
		"": false, "x1": false, "999": false, "1000": true, "18446744073709551616": true,
	} {
		if got := CursorSteers(now, client); got != want {
			t.Errorf("CursorSteers(%q) = %v, want %v", client, got, want)
		}
	}
}
