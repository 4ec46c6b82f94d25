package boltstore

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/dsd-project/dsd/engine/storage"
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

// Every append of the log ends a group for the checkpointer and the zeroer, on each way
// out: written, failed to write (its segment closed under it: it cannot be cut off
// either), refused by the log that could not cut it off, failed to start a segment.
func TestLogAppendSignalsEveryGroupEnd(t *testing.T) {
	dir := t.TempDir()
	w := &wal{dir: filepath.Join(dir, LogDir), noSync: true, ended: newEdge(), zero: zeroer{noSync: true, ended: newEdge()}}
	group := []storage.Change{{SID: 1, Messages: []storage.Message{{Off: 0, Val: []byte("\x00x")}}}}
	ended := func(how string, wantErr bool) {
		t.Helper()
		if _, err := w.append(group); (err != nil) != wantErr {
			t.Fatalf("%s: append error %v", how, err)
		}
		if len(w.ended) != 1 || len(w.zero.ended) != 1 {
			t.Fatalf("%s: group end signalled %d (checkpointer), %d (zeroer) times; want 1, 1", how, len(w.ended), len(w.zero.ended))
		}
		<-w.ended
		<-w.zero.ended
	}
	ended("written", false)
	w.f.Close()
	ended("failed", true)
	if w.broken == nil {
		t.Fatal("a failed group that could not be cut off left the log taking appends")
	}
	ended("refused", true)
	w.broken = nil
	w.rotate()
	w.dir = filepath.Join(dir, "file")
	if err := os.WriteFile(w.dir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ended("no segment", true)
}
