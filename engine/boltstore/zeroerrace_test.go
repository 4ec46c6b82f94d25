package boltstore_test

import (
	"bytes"
	"math/rand"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/dsd-project/dsd/engine/boltstore"
	"github.com/dsd-project/dsd/engine/storage"
)

// stressSegment is the segment size of the zeroer stress test: several rollovers, and
// chunks of zeros (256 KiB) cut short by the segment's end.
const stressSegment = 300 << 10

// The zeroer races the committer (run with -race) through appends of random sizes with
// runs of zeros, records ending exactly on a 256 KiB chunk boundary and rollovers, while
// another goroutine copies the live directory (the state a crash leaves). Every copy
// reopens to a prefix of the appends holding all those acknowledged before the copy began,
// and dsd check agrees; so does the store after Close. Spec: DESIGN.md D4.
func TestZeroerRacesCommitterAndCrashCopies(t *testing.T) {
	opts := never
	opts.ZeroAhead, opts.SegmentBytes = 64<<10, stressSegment
	dir := t.TempDir()
	st, err := boltstore.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	logStream(t, st)
	vals := stressValues(250)
	var acked atomic.Int64 // appends acknowledged
	var wg sync.WaitGroup
	var copies []stressCopy
	done, copied := make(chan struct{}), make(chan struct{}, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			c := stressCopy{dir: filepath.Join(t.TempDir(), "copy"), acked: int(acked.Load())}
			copyDir(t, dir, c.dir)
			copies = append(copies, c)
			select {
			case copied <- struct{}{}:
			default:
			}
		}
	}()
	tail := uint64(0)
	for i, v := range vals {
		if i%25 == 24 {
			<-copied // a copy at least every 25 appends, taken while they go on
		}
		val := append([]byte{storage.FlagUnitEnd}, v...)
		mustCommit(t, st, storage.Change{SID: 1, Messages: []storage.Message{{Off: tail, Val: val}}})
		tail += uint64(len(v))
		acked.Add(1)
	}
	close(done)
	wg.Wait()
	if len(copies) < 2 {
		t.Fatalf("%d copies taken during the run, want at least 2", len(copies))
	}
	for _, c := range copies {
		reopensToPrefix(t, c.dir, vals, c.acked)
	}
	final := stressCopy{dir: filepath.Join(t.TempDir(), "final"), acked: len(vals)}
	copyDir(t, dir, final.dir)
	segmentsEndWhole(t, final.dir)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	reopensToPrefix(t, final.dir, vals, len(vals))
	reopensToPrefix(t, dir, vals, len(vals))
	t.Logf("%d crash copies during %d appends", len(copies), len(vals))
}

type stressCopy struct {
	dir   string
	acked int // appends acknowledged before the copy began
}

// stressValues returns n appends' bytes: random sizes up to 20 KiB, half of them with a
// run of zeros inside or at their end, and every 16th sized so that its record ends
// exactly on a 256 KiB boundary of its segment (the log rolls over as Store does).
func stressValues(n int) [][]byte {
	rng := rand.New(rand.NewSource(1))
	var vals [][]byte
	segOff, tail := 0, uint64(0)
	for i := range n {
		v := bytes.Repeat([]byte{byte('a' + i%26)}, 1+rng.Intn(20<<10))
		if i%2 == 1 {
			at := rng.Intn(len(v))
			clear(v[at:min(len(v), at+rng.Intn(4096))])
		}
		if next := (segOff/(256<<10) + 1) * (256 << 10); i%16 == 15 && next < stressSegment && next-segOff > 64 {
			v = bytes.Repeat([]byte{'x'}, next-segOff)
			for segOff+frameLen(tail, v) > next {
				v = v[:len(v)-1]
			}
		}
		vals = append(vals, v)
		segOff += frameLen(tail, v)
		tail += uint64(len(v))
		if segOff >= stressSegment {
			segOff = 0
		}
	}
	return vals
}

func frameLen(tail uint64, v []byte) int {
	val := append([]byte{storage.FlagUnitEnd}, v...)
	return len(boltstore.EncodeLogRecord([]storage.Change{{SID: 1, Messages: []storage.Message{{Off: tail, Val: val}}}}))
}

// reopensToPrefix asserts that dsd check finds dir sound and that it reopens to the first
// k appends of vals, k >= acked.
func reopensToPrefix(t *testing.T, dir string, vals [][]byte, acked int) {
	t.Helper()
	rep, err := boltstore.CheckFile(filepath.Join(dir, boltstore.FileName))
	if err != nil || len(rep.Problems) != 0 {
		t.Fatalf("%s: check: %v %+v", dir, err, rep)
	}
	st, err := boltstore.Open(dir, never)
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	defer st.Close()
	_, data := contents(t, st)
	var want []byte
	k := 0
	for ; k < len(vals) && len(want) < len(data); k++ {
		want = append(want, vals[k]...)
	}
	if data != string(want) || k < acked || (rep.Logged != 0 && rep.Logged != k) {
		t.Fatalf("%s: %d bytes, a prefix of %d appends: %v; want at least %d (check counted %d)", dir, len(data), k, data == string(want), acked, rep.Logged)
	}
	if _, err := os.Stat(filepath.Join(dir, boltstore.LogDir)); err == nil && rep.Logged == 0 && k > 0 {
		t.Fatalf("%s: a log of no groups, yet %d appends reopened", dir, k)
	}
}

// segmentsEndWhole asserts that dir's log has rolled over at least twice, that each
// segment before the last ends with a record at or past stressSegment, and that some
// record ends exactly on a 256 KiB boundary.
func segmentsEndWhole(t *testing.T, dir string) {
	t.Helper()
	segs, _ := filepath.Glob(filepath.Join(dir, boltstore.LogDir, "*.seg"))
	if len(segs) < 3 {
		t.Fatalf("segments %v, want at least 3", segs)
	}
	onChunk := 0
	for i, seg := range segs {
		b, err := os.ReadFile(seg)
		if err != nil {
			t.Fatal(err)
		}
		ends := recordEnds(trimZerosOf(b))
		if i < len(segs)-1 && (ends[len(ends)-1] != len(b) || len(b) < stressSegment) {
			t.Fatalf("%s: %d bytes, records end at %d: want a whole last record past %d", seg, len(b), ends[len(ends)-1], stressSegment)
		}
		for _, e := range ends {
			if e%(256<<10) == 0 {
				onChunk++
			}
		}
	}
	if onChunk == 0 {
		t.Fatal("no record ends on a 256 KiB boundary")
	}
}
