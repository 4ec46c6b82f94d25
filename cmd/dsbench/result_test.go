package main

import (
	"errors"
	"testing"
	"time"
)

func TestResultLineRoundTrips(t *testing.T) {
	tags, err := parseTags("server=node-durable round=2")
	if err != nil {
		t.Fatal(err)
	}
	r := NewResult("append", tags)
	r.Set("rps", 1234.5678)
	r.Set("p99_ms", 2500*time.Microsecond)
	r.Set("json", true)
	r.Set("note", "two words")
	line := r.String()
	want := "RESULT workload=append server=node-durable round=2 rps=1234.568 p99_ms=2.500 json=1 note=two_words"
	if line != want {
		t.Fatalf("line\n got %s\nwant %s", line, want)
	}
	m, ok := ParseResult("prefix noise " + line)
	if !ok || m["server"] != "node-durable" || m["rps"] != "1234.568" || m["workload"] != "append" {
		t.Fatalf("ParseResult = %v, %v", m, ok)
	}
	if _, ok := ParseResult("no result here"); ok {
		t.Fatal("ParseResult accepted a line without RESULT")
	}
}

func TestParseTagsRejectsBareWords(t *testing.T) {
	if _, err := parseTags("server=x oops"); err == nil {
		t.Fatal("parseTags accepted a tag without '='")
	}
}

func TestStatusesCountErrorsAndTransportFailures(t *testing.T) {
	s := Statuses{}
	s.Inc(204, nil)
	s.Inc(204, nil)
	s.Inc(409, nil)
	s.Inc(0, errors.New("connection refused"))
	s.Inc(200, errors.New("body read failed"))
	o := Statuses{}
	o.Inc(503, nil)
	s.Add(o)
	if s.Errors() != 4 {
		t.Fatalf("Errors = %d, want 4 (409, 503, 2 neterr): %v", s.Errors(), s)
	}
	r := NewResult("x", nil)
	r.SetStatuses("", s)
	if r.Get("status_409") != "1" || r.Get("status_neterr") != "2" || r.Get("status_204") != "" {
		t.Fatalf("RESULT statuses: %s", r)
	}
	if s.String() != "204:2 409:1 503:1 neterr:2" {
		t.Fatalf("String = %q", s.String())
	}
}

func TestResultOmitsLatencyWithoutSamples(t *testing.T) {
	r := NewResult("fanout", nil)
	r.SetLatency("", &Histogram{})
	if r.Get("p99_ms") != "" || r.String() != "RESULT workload=fanout" {
		t.Fatalf("empty histogram wrote %s", r)
	}
	var h Histogram
	h.Record(3 * time.Millisecond)
	r.SetLatency("req_", &h)
	if r.Get("req_p99_ms") != "3.000" || r.Get("req_max_ms") != "3.000" {
		t.Fatalf("latency keys: %s", r)
	}
}
