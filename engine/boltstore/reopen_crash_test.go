package boltstore_test

import (
	"testing"

	"github.com/dsd-project/dsd/engine/boltstore"
)

// A clean close removes the log; groups logged after the next open must be replayed whole
// after a crash (the new segment is numbered above the stored log position).
func TestCrashAfterCleanCloseAndReopenLosesNothing(t *testing.T) {
	st, live, tail := openWithAppends(t, never, 5)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := boltstore.Open(live, never)
	if err != nil {
		t.Fatal(err)
	}
	for i := 5; i < 12; i++ {
		tail = appendUnit(t, st, i, tail)
	}
	dir, _ := crashCopy(t, st, live)
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

// Two crashes in a row with zeros written ahead: the segment the first recovery leaves
// behind ends in zeros and is no longer the last one; the second recovery must still
// replay every acknowledged group.
func TestTwoCrashesWithZerosAheadLoseNothing(t *testing.T) {
	synced := boltstore.Options{CheckpointBytes: -1, CheckpointInterval: -1}
	st, live, tail := openWithAppends(t, synced, 5)
	boltstore.FillZeros(st)
	dir, _ := crashCopy(t, st, live)
	st, err := boltstore.Open(dir, synced)
	if err != nil {
		t.Fatalf("reopen after the first crash: %v", err)
	}
	for i := 5; i < 12; i++ {
		tail = appendUnit(t, st, i, tail)
	}
	boltstore.FillZeros(st)
	again := t.TempDir()
	copyDir(t, dir, again)
	st.Close()
	st, err = boltstore.Open(again, synced)
	if err != nil {
		t.Fatalf("reopen after the second crash: %v", err)
	}
	defer st.Close()
	gotTail, got := contents(t, st)
	if gotTail != tail || got != prefix(12) {
		t.Fatalf("after two crashes: tail %d (want %d), data %q (want %q)", gotTail, tail, got, prefix(12))
	}
}
