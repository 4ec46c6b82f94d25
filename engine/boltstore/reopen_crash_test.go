package boltstore_test

import (
	"testing"

	"github.com/dsd-project/dsd/engine/boltstore"
)

// A clean close removes the log; groups logged after the next open must be replayed whole
// after a crash (the new segment is numbered above the stored log position).
func TestCrashAfterCleanCloseAndReopenLosesNothing(t *testing.T) {
	live := t.TempDir()
	st, err := boltstore.Open(live, never)
	if err != nil {
		t.Fatal(err)
	}
	logStream(t, st)
	tail := uint64(0)
	for i := range 5 {
		tail = appendUnit(t, st, i, tail)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st, err = boltstore.Open(live, never)
	if err != nil {
		t.Fatal(err)
	}
	for i := 5; i < 12; i++ {
		tail = appendUnit(t, st, i, tail)
	}
	dir := t.TempDir()
	copyDir(t, live, dir) // the state a crash leaves
	st.Close()
	st, err = boltstore.Open(dir, never)
	if err != nil {
		t.Fatalf("reopen after crash: %v", err)
	}
	defer st.Close()
	gotTail, got := contents(t, st)
	if gotTail != tail || got != prefix(12) {
		t.Fatalf("after crash: tail %d (want %d), data %q (want %q)", gotTail, tail, got, prefix(12))
	}
}
