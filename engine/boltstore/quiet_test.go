package boltstore

import (
	"runtime"
	"testing"
	"time"
)

// A waiter returns on the first group end signalled after its call, long before its bound.
func TestEdgeNextReturnsOnAGroupEnd(t *testing.T) {
	e := newEdge()
	done := make(chan struct{})
	go func() { e.next(time.Hour, nil); close(done) }()
	for {
		select {
		case <-done:
			return
		default:
			e.signal()
			runtime.Gosched()
		}
	}
}

// A group that ended before the call is not the moment waited for: next drops its signal
// (then stop ends the wait). Kept, select would pick it or stop at random: 64 rounds.
func TestEdgeNextDropsAStaleSignal(t *testing.T) {
	e := newEdge()
	stop := make(chan struct{})
	close(stop)
	for range 64 {
		e.signal()
		e.signal() // never blocks
		e.next(time.Hour, stop)
		if len(e) != 0 {
			t.Fatalf("%d signals left after next: the stale one was taken for a fresh group end", len(e))
		}
	}
}
