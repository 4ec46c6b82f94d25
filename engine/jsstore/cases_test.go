package jsstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/dsd-project/dsd/engine/storage"
	"github.com/dsd-project/dsd/model"
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
	if m.Tail == 0 {
		return m, ""
	}
	return readAllFrom(t, st, name, 0)
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
	// An old receipt (before the checkpoint) is found in the log.
	if r, ok, err := re.Receipt(1, model.Producer{ID: "p", Epoch: 1, Seq: 3}); err != nil || !ok || r.End != 8 {
		t.Fatalf("receipt of seq 3 after reload: %+v %v %v", r, ok, err)
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

// A fork's reference on its source is written after the fork's own frame: a later
// change of the group that set the source's meta again keeps its meta (here: closed),
// and a fork whose frame failed leaves the count alone and its name unbound.
func testForkReferences(t *testing.T, e *env) {
	o := e.opts()
	o.Partitions = 1
	st := e.open(t, o)
	defer st.Close()
	src := createChange(1, "src", "ab")
	mustCommit(t, st, src)
	fork := func(sid uint64, name string, refs int) (storage.Change, storage.Meta) {
		c := createChange(sid, name)
		c.Meta.Fork = &storage.Fork{SourceID: 1, Anchor: 2, Chain: []storage.Segment{{SID: 1, To: 2}}}
		sm := *src.Meta
		sm.Refs = refs
		c.Also = []*storage.Meta{&sm}
		return c, sm
	}
	f1, sm := fork(2, "f1", 1)
	closed := sm
	closed.Closed = true
	mustCommit(t, st, f1, storage.Change{SID: 1, Meta: &closed})
	f2, _ := fork(3, "f2", 2)
	st.opts.ResolveTimeout = 300 * time.Millisecond
	fsubj := st.logSubj(0, 3)
	st.dropAck = func(subj string, _ int) bool { return subj == fsubj }
	errs := st.Commit([]storage.Change{f2})
	st.dropAck = nil
	if !errors.Is(errs[0], storage.ErrUnknown) {
		t.Fatalf("fork with its frame in doubt: %v", errs[0])
	}
	re := e.open(t, o)
	defer re.Close()
	m, _ := readAll(t, re, "bk/src")
	if !m.Closed || m.Refs != 1 {
		t.Fatalf("source after the forks: closed %v, refs %d (want closed, 1)", m.Closed, m.Refs)
	}
	if m, err := re.Stream("bk/f2"); err != nil || m != nil {
		t.Fatalf("the failed fork is bound: %+v %v", m, err)
	}
	if m, err := re.Stream("bk/f1"); err != nil || m == nil || m.Fork == nil {
		t.Fatalf("fork f1: %+v %v", m, err)
	}
}

// Two stores that both believe they own a stream commit at once with the same
// expectation: exactly one wins each round, the other gets ErrConflict (after resending
// through any in-flight rejection), and the log holds the winner's unit only.
func testRacingWriters(t *testing.T, e *env) {
	o := e.opts()
	a := e.open(t, o)
	defer a.Close()
	mustCommit(t, a, createChange(1, "s"))
	b := e.open(t, o)
	defer b.Close()
	var want strings.Builder
	for round := 0; round < 5; round++ {
		off := uint64(want.Len())
		results := make(chan error, 2)
		for _, st := range []*Store{a, b} {
			go func() {
				results <- st.Commit([]storage.Change{{SID: 1, Messages: []storage.Message{unit(off, fmt.Sprint(round))}}})[0]
			}()
		}
		wins := 0
		for i := 0; i < 2; i++ {
			switch err := <-results; {
			case err == nil:
				wins++
			case !errors.Is(err, storage.ErrConflict):
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if wins != 1 {
			t.Fatalf("round %d: %d winners", round, wins)
		}
		want.WriteString(fmt.Sprint(round))
	}
	if _, got := readAll(t, e.open(t, o), "bk/s"); got != want.String() {
		t.Fatalf("log holds %q, want %q", got, want.String())
	}
	t.Logf("in-flight rejections resent: %d", a.Stats().InFlight+b.Stats().InFlight)
}

// Trim purges the frames below the retention boundary from JetStream, and a reload takes
// what they held (meta, producers) from the checkpoint Trim wrote first; Collect leaves
// nothing in JetStream but the high-water mark that keeps LastSID. Reads work with
// direct gets off (every frame then comes from the leader).
func testPurges(t *testing.T, e *env) {
	o := e.opts()
	o.Partitions = 1
	o.IndexBytes = 1
	st := e.open(t, o)
	defer st.Close()
	c := createChange(1, "s", "aa")
	mustCommit(t, st, c)
	ps := &storage.ProducerState{Epoch: 3, LastSeq: 0}
	mustCommit(t, st, storage.Change{SID: 1, Messages: []storage.Message{unit(2, "bb")},
		Producer: &storage.ProducerPut{ID: "p", State: ps}})
	mustCommit(t, st, storage.Change{SID: 1, Messages: []storage.Message{unit(4, "cc")}})
	m := *c.Meta
	m.RetainedFrom, m.Tail = 4, 6
	mustCommit(t, st, storage.Change{SID: 1, Meta: &m, Retained: true})
	before := st.subjectCount(t, st.logSubj(0, 1))
	if done, err := st.Trim(1, 100); err != nil || !done {
		t.Fatalf("trim: %v %v", done, err)
	}
	if after := st.subjectCount(t, st.logSubj(0, 1)); after != before-2 {
		t.Fatalf("trim left %d of %d frames, want %d", after, before, before-2)
	}
	re := e.open(t, o)
	defer re.Close()
	re.noDirect = true
	got, data := readAllFrom(t, re, "bk/s", 4)
	if got.RetainedFrom != 4 || got.Tail != 6 || data != "cc" {
		t.Fatalf("after trim and reload: %+v %q", got, data)
	}
	if p, _ := re.Producer(1, "p"); p == nil || p.Epoch != 3 {
		t.Fatalf("producer from the checkpoint: %+v", p)
	}
	if trims, _ := re.Trims(); len(trims) != 0 {
		t.Fatalf("trim mark after reload: %v", trims)
	}
	mustCommit(t, re, storage.Change{SID: 1, Unbind: []storage.Binding{{Name: "bk/s", Bucket: "bk", SID: 1}}})
	for i := 0; ; i++ {
		done, err := re.Collect(1, 10)
		if err != nil || i > 5 {
			t.Fatalf("collect: %v after %d rounds", err, i)
		}
		if done {
			break
		}
	}
	again := e.open(t, o)
	defer again.Close()
	if trash, _ := again.Trash(10); len(trash) != 0 {
		t.Fatalf("trash after collect and reload: %v", trash)
	}
	for _, subj := range []string{again.logSubj(0, 1), again.logSubj(0, 1) + ".m", again.nameSubj(0, "bk/s")} {
		if n := again.subjectCount(t, subj); n != 0 {
			t.Fatalf("collected: %s keeps %d messages", subj, n)
		}
	}
	if sid, err := again.LastSID(); err != nil || sid != 1 {
		t.Fatalf("last sid after the only stream was collected: %d %v", sid, err)
	}
}

func readAllFrom(t testing.TB, st *Store, name string, from uint64) (*storage.Meta, string) {
	t.Helper()
	m, err := st.Stream(name)
	if err != nil || m == nil {
		t.Fatalf("stream %s: %v %v", name, m, err)
	}
	var buf bytes.Buffer
	err = st.Messages([]storage.Segment{{SID: m.ID, To: m.Tail}}, from, m.Tail, storage.Limits{Bytes: 1 << 30},
		func(_ uint64, v []byte) { buf.Write(v[1:]) })
	if err != nil {
		t.Fatalf("read %s from %d: %v", name, from, err)
	}
	return m, buf.String()
}

// subjectCount returns the number of messages stored on subj.
func (s *Store) subjectCount(t *testing.T, subj string) uint64 {
	t.Helper()
	ctx, cancel := s.readCtx()
	defer cancel()
	info, err := s.streams[0].Info(ctx, jetstream.WithSubjectFilter(subj))
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Subjects[subj]
}

// A closed partition answers ErrNotOwned (a commit's also wraps ErrConflict: another
// node owns it); opening it again loads it back from JetStream.
func testPartitionHandover(t *testing.T, e *env) {
	o := e.opts()
	st := e.open(t, o)
	defer st.Close()
	mustCommit(t, st, createChange(1, "s", "ab"))
	k := PartitionOf("bk/s", o.Partitions)
	st.ClosePartition(k)
	if got := st.Owned(); len(got) != 1 || got[0] == k {
		t.Fatalf("owned after closing %d: %v", k, got)
	}
	if _, err := st.Stream("bk/s"); !errors.Is(err, ErrNotOwned) {
		t.Fatalf("read of a closed partition: %v", err)
	}
	errs := st.Commit([]storage.Change{{SID: 1, Messages: []storage.Message{unit(2, "c")}}})
	if !errors.Is(errs[0], ErrNotOwned) || !errors.Is(errs[0], storage.ErrConflict) {
		t.Fatalf("commit to a closed partition: %v", errs[0])
	}
	if err := st.OpenPartition(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, st, storage.Change{SID: 1, Messages: []storage.Message{unit(2, "c")}})
	if _, got := readAll(t, st, "bk/s"); got != "abc" {
		t.Fatalf("after reopening the partition: %q", got)
	}
}

// A create whose name binding failed leaves an unbound incarnation; a later open deletes
// it once it is older than OrphanAge, and Collect frees it.
func testOrphans(t *testing.T, e *env) {
	o := e.opts()
	o.Partitions = 1
	st := e.open(t, o)
	defer st.Close()
	mustCommit(t, st, createChange(1, "kept", "a"))
	st.noNames = true
	c := createChange(2, "orphan", "b")
	c.Meta.CreatedMs = time.Now().UnixMilli()
	if errs := st.Commit([]storage.Change{c}); errs[0] == nil {
		t.Fatal("a create whose binding failed succeeded")
	}
	st.noNames = false
	young := e.open(t, o)
	defer young.Close()
	if m, _, _ := young.Incarnation(2); m == nil {
		t.Fatal("the orphan was deleted before OrphanAge")
	}
	time.Sleep(5 * time.Millisecond)
	o.OrphanAge = time.Millisecond
	re := e.open(t, o)
	defer re.Close()
	if m, _, _ := re.Incarnation(2); m != nil {
		t.Fatalf("orphan still live: %+v", m)
	}
	if trash, _ := re.Trash(10); len(trash) != 1 || trash[0] != 2 {
		t.Fatalf("trash %v, want the orphan", trash)
	}
	if _, got := readAll(t, re, "bk/kept"); got != "a" {
		t.Fatalf("bound stream after orphan collection: %q", got)
	}
}

// A read far behind the tail starts at the offset index entry before it: it decodes a
// few frames, not the log from its start; so does a record lookup.
func testOffsetIndex(t *testing.T, e *env) {
	o := e.opts()
	o.IndexBytes = 8 << 10
	st := e.open(t, o)
	defer st.Close()
	c := createChange(1, "j")
	c.Records = true
	mustCommit(t, st, c)
	rec := strings.Repeat("x", 1023) + "\n"
	for i := 0; i < 200; i++ {
		mustCommit(t, st, storage.Change{SID: 1, Messages: []storage.Message{unit(uint64(i*1024), rec)}, Records: true, FirstRecord: uint64(i)})
	}
	re := e.open(t, o)
	defer re.Close()
	re.decoded.Store(0)
	var got uint64
	if err := re.Messages([]storage.Segment{{SID: 1, To: 200 * 1024}}, 150*1024, 200*1024, storage.One,
		func(off uint64, _ []byte) { got = off }); err != nil || got != 150*1024 {
		t.Fatalf("read at 150 KiB: %d %v", got, err)
	}
	if off, ok, err := re.RecordOffset(1, 170); err != nil || !ok || off != 170*1024 {
		t.Fatalf("record 170: %d %v %v", off, ok, err)
	}
	t.Logf("decoded %d frames", re.decoded.Load())
	if n := re.decoded.Load(); n > 20 {
		t.Fatalf("two lookups far behind the tail decoded %d frames of 201", n)
	}
}
