package boltstore_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/dsd-project/dsd/engine/boltstore"
)

// The zeroer's zeros ahead of the log's last record are overwritten in place by the next
// groups, and a crash with zeros after the last record loses nothing and warns of
// nothing. Spec: DESIGN.md D4.
func TestZerosAheadAreOverwrittenAndEndTheLog(t *testing.T) {
	opts := never
	opts.ZeroAhead = 64 << 10
	warned := 0
	opts.Warn = func(string, ...any) { warned++ }
	st, live, tail := openWithAppends(t, opts, 3)
	boltstore.FillZeros(st)
	for i := 3; i < 30; i++ {
		tail = appendUnit(t, st, i, tail)
	}
	boltstore.FillZeros(st)
	dir, seg := crashCopy(t, st, live)
	b, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	end := recordEnds(b)[29]
	if len(b) < end+int(opts.ZeroAhead) {
		t.Fatalf("segment of %d bytes, records end at %d: want %d bytes of zeros after them", len(b), end, opts.ZeroAhead)
	}
	rep, err := boltstore.CheckFile(filepath.Join(dir, boltstore.FileName))
	if err != nil || len(rep.Problems) != 0 || rep.Logged != 30 || rep.LoggedTorn {
		t.Fatalf("check: %v %+v, want 30 groups", err, rep)
	}
	st, err = boltstore.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if gotTail, got := contents(t, st); gotTail != tail || got != prefix(30) || warned != 0 {
		t.Fatalf("after crash: tail %d (want %d), data %q, %d warnings", gotTail, tail, got, warned)
	}
}

// Zeros are a log's end only when nothing but zeros follows: a record after a run of
// zeros is damage, not a write cut short.
func TestRecordAfterZerosRefusesOpen(t *testing.T) {
	dir, seg := crashedDir(t, 10)
	b, _ := os.ReadFile(seg)
	at := recordEnds(b)[4]
	damaged := append(append(append([]byte{}, b[:at]...), make([]byte, 100)...), b[at:]...)
	if err := os.WriteFile(seg, damaged, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := boltstore.Open(dir, never); !errors.Is(err, boltstore.ErrLogCorrupt) {
		t.Fatalf("open: %v, want ErrLogCorrupt", err)
	}
}
