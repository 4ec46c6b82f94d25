package httpd

import (
	"sync/atomic"
	"testing"
	"time"
)

// A burst of parked subscribers is followed by one free once it is quiet; fewer than
// minJoins subscribers and a stopped set free nothing (issue 19).
func TestBurstFreeAfterQuiet(t *testing.T) {
	var frees atomic.Int32
	b := &burstFree{minJoins: 10, quiet: 20 * time.Millisecond, free: func() { frees.Add(1) }}
	for range 9 {
		b.joined()
	}
	time.Sleep(60 * time.Millisecond)
	if n := frees.Load(); n != 0 {
		t.Fatalf("%d frees before minJoins", n)
	}
	for range 25 {
		b.joined()
	}
	waitFor(t, func() bool { return frees.Load() == 1 })
	time.Sleep(60 * time.Millisecond)
	if n := frees.Load(); n != 1 {
		t.Fatalf("%d frees after one burst, want 1", n)
	}
	for range 10 {
		b.joined()
	}
	b.stop()
	time.Sleep(60 * time.Millisecond)
	if n := frees.Load(); n != 1 {
		t.Fatalf("%d frees after stop, want 1", n)
	}
}

// A burst interrupted by a pause longer than quiet gets its tail freed too, once: the
// joins after that tail free need minJoins again.
func TestBurstFreeTail(t *testing.T) {
	var frees atomic.Int32
	b := &burstFree{minJoins: 10, quiet: 20 * time.Millisecond, free: func() { frees.Add(1) }}
	defer b.stop()
	for range 12 {
		b.joined()
	}
	waitFor(t, func() bool { return frees.Load() == 1 })
	for range 3 { // the burst's tail, after a pause
		b.joined()
	}
	waitFor(t, func() bool { return frees.Load() == 2 })
	for range 3 {
		b.joined()
	}
	time.Sleep(60 * time.Millisecond)
	if n := frees.Load(); n != 2 {
		t.Fatalf("%d frees, want 2: a tail free must not arm another", n)
	}
}
