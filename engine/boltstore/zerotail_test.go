package boltstore_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsd-project/dsd/engine/boltstore"
	"github.com/dsd-project/dsd/engine/storage"
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
	refusesDamagedLog(t, dir)
}

// A damaged record followed by a whole record whose bytes end in zeros (a client's
// message ending in 100 zero bytes) is damage, not a write cut short, with or without the
// zeroer's zeros after it: the zeros of the last record are not the log's end.
func TestDamagedRecordBeforeZeroEndedRecordRefusesOpen(t *testing.T) {
	for _, ahead := range []int{0, 3000} {
		t.Run(fmt.Sprintf("zeros=%d", ahead), func(t *testing.T) {
			st, live, tail := openWithAppends(t, never, 6)
			val := append([]byte{storage.FlagUnitEnd, 'z'}, make([]byte, 100)...)
			mustCommit(t, st, storage.Change{SID: 1, Messages: []storage.Message{{Off: tail, Val: val}}})
			dir, seg := crashCopy(t, st, live)
			b, _ := os.ReadFile(seg)
			b[recordEnds(b)[4]+12] ^= 0x5a // record 6 of 7, before the one ending in zeros
			b = append(b, make([]byte, ahead)...)
			if err := os.WriteFile(seg, b, 0o600); err != nil {
				t.Fatal(err)
			}
			refusesDamagedLog(t, dir)
		})
	}
}

// refusesDamagedLog asserts that dsd check reports dir's group log damaged and Open
// refuses dir with ErrLogCorrupt.
func refusesDamagedLog(t *testing.T, dir string) {
	t.Helper()
	rep, err := boltstore.CheckFile(filepath.Join(dir, boltstore.FileName))
	if err != nil || len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0], "group log") {
		t.Fatalf("check: %v %+v, want the group log damaged", err, rep)
	}
	if st, err := boltstore.Open(dir, never); !errors.Is(err, boltstore.ErrLogCorrupt) {
		if err == nil {
			st.Close()
		}
		t.Fatalf("open: %v, want ErrLogCorrupt", err)
	}
}

// rotatedDir leaves in a directory the state a crash leaves after n appends logged over
// several segments of about segBytes with zeros ahead, and returns it and its segments.
func rotatedDir(t *testing.T, n int, segBytes int64) (dir string, segs []string) {
	opts := never
	opts.SegmentBytes, opts.ZeroAhead = segBytes, 64<<10
	st, live, _ := openWithAppends(t, opts, n)
	boltstore.FillZeros(st)
	dir = t.TempDir()
	copyDir(t, live, dir)
	st.Close()
	segs, _ = filepath.Glob(filepath.Join(dir, boltstore.LogDir, "*.seg"))
	if len(segs) < 3 {
		t.Fatalf("segments %v, want at least 3", segs)
	}
	return dir, segs
}

// A segment the log rolled over from ends at its last record (SegmentBytes bounds the
// zeros, the last record reaches past it); only the last segment ends in zeros. Recovery
// and dsd check read every group of every segment.
func TestRolledOverSegmentsReopenWhole(t *testing.T) {
	const n = 41
	dir, segs := rotatedDir(t, n, 100)
	for _, seg := range segs[:len(segs)-1] {
		b, _ := os.ReadFile(seg)
		if len(b) < 100 || b[len(b)-1] == 0 {
			t.Fatalf("%s: %d bytes ending in %d, want a whole record at its end past 100", seg, len(b), b[len(b)-1])
		}
	}
	b, _ := os.ReadFile(segs[len(segs)-1])
	if ends := recordEnds(trimZerosOf(b)); len(b) != max(100, ends[len(ends)-1]) {
		t.Fatalf("last segment of %d bytes, want its records and zeros up to SegmentBytes", len(b))
	}
	rep, err := boltstore.CheckFile(filepath.Join(dir, boltstore.FileName))
	if err != nil || len(rep.Problems) != 0 || rep.Logged != n || rep.LoggedTorn {
		t.Fatalf("check: %v %+v, want %d groups", err, rep, n)
	}
	st, err := boltstore.Open(dir, never)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if tail, data := contents(t, st); tail != n*10 || data != prefix(n) {
		t.Fatalf("tail %d, data %q; want %d appends", tail, data, n)
	}
}

// Zeros in place of a rolled-over segment's last records (lost writes) are damage: the
// segment was full when the log moved on, and the next segment's groups follow them.
func TestZeroedTailOfRolledOverSegmentRefusesOpen(t *testing.T) {
	dir, segs := rotatedDir(t, 40, 100)
	b, _ := os.ReadFile(segs[0])
	ends := recordEnds(b)
	clear(b[ends[len(ends)-2]:])
	if err := os.WriteFile(segs[0], b, 0o600); err != nil {
		t.Fatal(err)
	}
	refusesDamagedLog(t, dir)
}

func trimZerosOf(b []byte) []byte {
	for len(b) > 0 && b[len(b)-1] == 0 {
		b = b[:len(b)-1]
	}
	return b
}

// Close while the zeroer writes (right after the appends that woke it) waits for it,
// leaves no log, and the directory reopens with every append; appends after the reopen
// are logged over new zeros and survive a crash.
func TestCloseWhileZeroingThenReopen(t *testing.T) {
	opts := never
	opts.ZeroAhead = boltstore.DefaultZeroAhead
	st, dir, tail := openWithAppends(t, opts, 20)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, boltstore.LogDir)); !os.IsNotExist(err) {
		t.Fatalf("log directory after Close: %v", err)
	}
	st, err := boltstore.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got, data := contents(t, st); got != tail || data != prefix(20) {
		t.Fatalf("after Close: tail %d, data %q", got, data)
	}
	for i := 20; i < 30; i++ {
		tail = appendUnit(t, st, i, tail)
	}
	boltstore.FillZeros(st)
	crashed, seg := crashCopy(t, st, dir)
	if fi, err := os.Stat(seg); err != nil || fi.Size() < boltstore.DefaultZeroAhead {
		t.Fatalf("segment after the reopen: %v %v, want zeros ahead", fi, err)
	}
	st, err = boltstore.Open(crashed, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if got, data := contents(t, st); got != tail || data != prefix(30) {
		t.Fatalf("after the crash: tail %d, data %q", got, data)
	}
}

// A segment missing between others (deleted, lost) held acknowledged groups: Open
// refuses with ErrLogCorrupt and dsd check reports it, rather than replaying the segments
// around the gap.
func TestMissingSegmentRefusesOpen(t *testing.T) {
	dir, segs := rotatedDir(t, 40, 100)
	if err := os.Remove(segs[1]); err != nil {
		t.Fatal(err)
	}
	refusesDamagedLog(t, dir)
}
