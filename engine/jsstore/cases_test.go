package jsstore

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/dsd-project/dsd/engine/storage"
)

func unit(off uint64, s string) storage.Message {
	return storage.Message{Off: off, Val: append([]byte{storage.FlagUnitEnd}, s...)}
}

func createChange(sid uint64, name string, units ...string) storage.Change {
	var ms []storage.Message
	off := uint64(0)
	for _, u := range units {
		ms = append(ms, unit(off, u))
		off += uint64(len(u))
	}
	m := &storage.Meta{ID: sid, Bucket: "bk", Stream: name, ContentType: "text/plain", MediaType: "text/plain", Tail: off}
	return storage.Change{SID: sid, Bind: &storage.Binding{Name: "bk/" + name, Bucket: "bk", SID: sid}, Messages: ms, Meta: m}
}

func mustCommit(t testing.TB, st *Store, group ...storage.Change) {
	t.Helper()
	for i, err := range st.Commit(group) {
		if err != nil {
			t.Fatalf("change %d: %v", i, err)
		}
	}
}

func readAll(t testing.TB, st *Store, name string) (*storage.Meta, string) {
	t.Helper()
	m, err := st.Stream(name)
	if err != nil || m == nil {
		t.Fatalf("stream %s: %v %v", name, m, err)
	}
	var buf bytes.Buffer
	if m.Tail == 0 {
		return m, ""
	}
	err = st.Messages([]storage.Segment{{SID: m.ID, To: m.Tail}}, 0, m.Tail, storage.Limits{Bytes: 1 << 30},
		func(_ uint64, v []byte) { buf.Write(v[1:]) })
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return m, buf.String()
}

// A publish whose ack is lost is in doubt: the identical message is resent, JetStream
// answers it as a duplicate of the first, and the data is there once.
func testInDoubt(t *testing.T, e *env) {
	o := e.opts()
	st := e.open(t, o)
	defer st.Close()
	mustCommit(t, st, createChange(1, "s", "a"))
	lost := 0
	st.dropAck = func(subj string, attempt int) bool {
		if attempt < 2 {
			lost++
			return true
		}
		return false
	}
	mustCommit(t, st, storage.Change{SID: 1, Messages: []storage.Message{unit(1, "b")}})
	st.dropAck = nil
	if lost < 2 {
		t.Fatalf("%d acks lost, want 2 or more", lost)
	}
	mustCommit(t, st, storage.Change{SID: 1, Messages: []storage.Message{unit(2, "c")}})
	re := e.open(t, o)
	defer re.Close()
	if m, got := readAll(t, re, "bk/s"); got != "abc" || m.Tail != 3 {
		t.Fatalf("after in-doubt resends: %q tail %d", got, m.Tail)
	}
	// A lost ack beyond the resolution deadline is reported unknown, and the fold
	// reloaded from the log says what happened (here: it landed).
	st.opts.ResolveTimeout = 300 * time.Millisecond
	st.dropAck = func(string, int) bool { return true }
	errs := st.Commit([]storage.Change{{SID: 1, Messages: []storage.Message{unit(3, "d")}}})
	st.dropAck = nil
	if !errors.Is(errs[0], storage.ErrUnknown) {
		t.Fatalf("unresolved publish reported %v", errs[0])
	}
	if m, got := readAll(t, st, "bk/s"); got != "abcd" || m.Tail != 4 {
		t.Fatalf("reloaded after an unknown outcome: %q tail %d", got, m.Tail)
	}
	mustCommit(t, st, storage.Change{SID: 1, Messages: []storage.Message{unit(4, "e")}})
}

// Frames and snapshot bodies above ChunkBytes are staged in chunks and read back whole.
func testLargeFrames(t *testing.T, e *env) {
	o := e.opts()
	o.ChunkBytes = 64 << 10
	o.IndexBytes = 100 << 10
	st := e.open(t, o)
	defer st.Close()
	big := bytes.Repeat([]byte("0123456789abcdef"), 20<<10) // 320 KiB
	c := createChange(1, "big", string(big))
	m := *c.Meta
	m.Snapshot = &storage.Snapshot{Offset: uint64(len(big)), Digest: "d"}
	c.Meta = &m
	c.PutSnapshot = &storage.SnapshotBody{Offset: uint64(len(big)), Body: big[:200<<10]}
	mustCommit(t, st, c)
	for i := 1; i <= 3; i++ {
		mustCommit(t, st, storage.Change{SID: 1, Messages: []storage.Message{unit(uint64(i*len(big)), string(big))}})
	}
	re := e.open(t, o)
	defer re.Close()
	rm, got := readAll(t, re, "bk/big")
	if got != string(bytes.Repeat(big, 4)) || rm.Tail != uint64(4*len(big)) {
		t.Fatalf("large frames read back %d bytes, tail %d", len(got), rm.Tail)
	}
	var n int
	if err := re.Messages([]storage.Segment{{SID: 1, To: rm.Tail}}, uint64(2*len(big)), rm.Tail, storage.One,
		func(off uint64, v []byte) { n += len(v) - 1 }); err != nil || n != len(big) {
		t.Fatalf("read from the third frame: %d bytes, %v", n, err)
	}
	if _, body, err := re.SnapshotOf(1); err != nil || !bytes.Equal(body, big[:200<<10]) {
		t.Fatalf("chunked snapshot body: %d bytes, %v", len(body), err)
	}
}

// A store reopened after many commits loads each stream from its checkpoint and the
// log after it, with producers, records and the offset index intact.
func testCheckpoints(t *testing.T, e *env) {
	o := e.opts()
	o.CheckpointFrames = 10
	o.IndexBytes = 16
	st := e.open(t, o)
	defer st.Close()
	c := createChange(1, "j")
	c.Records = true
	c.Meta.ContentType, c.Meta.MediaType = "application/json", "application/json"
	mustCommit(t, st, c)
	var want bytes.Buffer
	for i := 0; i < 35; i++ {
		v := fmt.Sprintf("%d\n", i)
		ps := &storage.ProducerState{Epoch: 1, LastSeq: uint64(i)}
		off := uint64(want.Len())
		mustCommit(t, st, storage.Change{SID: 1, Messages: []storage.Message{unit(off, v)}, Records: true, FirstRecord: uint64(i),
			Producer: &storage.ProducerPut{ID: "p", State: ps, Receipt: &storage.Receipt{Seq: uint64(i), End: off + uint64(len(v))}}})
		want.WriteString(v)
	}
	re := e.open(t, o)
	defer re.Close()
	re.mu.RLock()
	in := re.parts[PartitionOf("bk/j", o.Partitions)].incs[1]
	ckpt, frames := in.Seq, in.sinceFrames
	re.mu.RUnlock()
	if frames >= 10 {
		t.Fatalf("reload folded %d frames after the checkpoint (seq %d), want < 10", frames, ckpt)
	}
	m, got := readAll(t, re, "bk/j")
	if got != want.String() || m.RecordNext != 35 {
		t.Fatalf("after reload: %q, %d records", got, m.RecordNext)
	}
	if p, _ := re.Producer(1, "p"); p == nil || p.LastSeq != 34 {
		t.Fatalf("producer after reload %+v", p)
	}
	for _, r := range []uint64{0, 17, 34} {
		off, ok, err := re.RecordOffset(1, r)
		wantOff := uint64(0)
		for i := uint64(0); i < r; i++ {
			wantOff += uint64(len(fmt.Sprintf("%d\n", i)))
		}
		if err != nil || !ok || off != wantOff {
			t.Fatalf("record %d at %d (%v %v), want %d", r, off, ok, err, wantOff)
		}
		if got, err := re.OrdinalAt(1, 0, 35, wantOff); err != nil || got != r {
			t.Fatalf("ordinal at %d: %d %v, want %d", wantOff, got, err, r)
		}
	}
}

// Two stores on the same partitions: the second one's commit on a stream the first
// changed since it loaded loses its compare-and-set (ErrConflict), is told to
// OnConflict, and succeeds once reloaded.
func testConflict(t *testing.T, e *env) {
	o := e.opts()
	a := e.open(t, o)
	defer a.Close()
	mustCommit(t, a, createChange(1, "s", "a"))
	conflicts := 0
	ob := o
	ob.OnConflict = func(int) { conflicts++ }
	b := e.open(t, ob)
	defer b.Close()
	mustCommit(t, a, storage.Change{SID: 1, Messages: []storage.Message{unit(1, "b")}})
	errs := b.Commit([]storage.Change{{SID: 1, Messages: []storage.Message{unit(1, "X")}}})
	if !errors.Is(errs[0], storage.ErrConflict) || conflicts != 1 {
		t.Fatalf("stale writer: %v, %d conflicts", errs[0], conflicts)
	}
	if f := b.Fences(); len(f) != 2 || f[0].Conflicts+f[1].Conflicts != 1 {
		t.Fatalf("fences %+v", f)
	}
	if _, got := readAll(t, b, "bk/s"); got != "ab" {
		t.Fatalf("the stale writer reloaded %q", got)
	}
	mustCommit(t, b, storage.Change{SID: 1, Messages: []storage.Message{unit(2, "c")}})
	if _, got := readAll(t, e.open(t, o), "bk/s"); got != "abc" {
		t.Fatalf("after the conflict: %q", got)
	}
}
