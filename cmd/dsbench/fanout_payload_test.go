package main

import (
	"bytes"
	"testing"
	"time"
)

func TestFanoutPayloadRoundTrip(t *testing.T) {
	p := fanoutPayload(42, 123456789*time.Nanosecond, 100)
	if len(p) != 100 || p[99] != '\n' {
		t.Fatalf("payload len %d: %q", len(p), p)
	}
	seq, sent, ok := parseFanoutLine(p[:99])
	if !ok || seq != 42 || sent != 123456789 {
		t.Fatalf("parse = %d %v %v", seq, sent, ok)
	}
	if short := fanoutPayload(7, 5, 1); string(short) != "7 5 \n" {
		t.Fatalf("a size below the header keeps the header: %q", short)
	}
	for _, bad := range []string{"", "nospace", "x 1", "1 y", "-1 5"} {
		if _, _, ok := parseFanoutLine([]byte(bad)); ok {
			t.Errorf("parseFanoutLine(%q) accepted", bad)
		}
	}
}

func TestFanoutTrackerCountsLossDupsReorderAndLatency(t *testing.T) {
	f := newFanoutTracker()
	msg := func(seq int64, sentMs int) []byte {
		return fanoutPayload(seq, time.Duration(sentMs)*time.Millisecond, 30)
	}
	// One data event batching seqs 0 and 2, then 2 again (duplicate), then 1 (late), 70 (past a
	// bitset word), and a malformed line.
	f.Observe(append(msg(0, 10), msg(2, 10)...), 15*time.Millisecond)
	f.Observe(msg(2, 10), 16*time.Millisecond)
	f.Observe(msg(1, 10), 30*time.Millisecond)
	f.Observe(append(msg(70, 100), []byte("garbage\n")...), 101*time.Millisecond)
	if f.Unique != 4 || f.Dups != 1 || f.Reordered != 1 || f.Malformed != 1 {
		t.Fatalf("unique=%d dups=%d reordered=%d malformed=%d", f.Unique, f.Dups, f.Reordered, f.Malformed)
	}
	all := func(n int) []bool {
		a := make([]bool, n)
		for i := range a {
			a[i] = true
		}
		return a
	}
	if lost := f.Lost(all(71)); lost != 67 { // 3..69 missing
		t.Fatalf("Lost(71 acked) = %d, want 67", lost)
	}
	if lost := f.Lost(all(3)); lost != 0 {
		t.Fatalf("Lost(3 acked) = %d, want 0", lost)
	}
	some := all(200)
	for i := 3; i < 70; i++ {
		some[i] = false // never acknowledged: not held against the subscriber
	}
	if lost := f.Lost(some); lost != 200-71 {
		t.Fatalf("Lost with unacknowledged gaps = %d, want %d", lost, 200-71)
	}
	if f.Latency.Count() != 4 || f.Latency.Max() != 20*time.Millisecond || f.Latency.Quantile(0.25) != time.Millisecond {
		t.Fatalf("latency n=%d max=%v p25=%v", f.Latency.Count(), f.Latency.Max(), f.Latency.Quantile(0.25))
	}
	if !bytes.HasSuffix(msg(1, 1), []byte("\n")) {
		t.Fatal("message lacks its newline")
	}
}
