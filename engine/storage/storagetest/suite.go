// Package storagetest is the contract every storage.Backend passes: each change kind,
// ordering within a group, all-or-nothing groups, every read, and restart = reopen. Run
// it from a backend's tests with a Harness.
package storagetest

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/dsd-project/dsd/engine/storage"
	"github.com/dsd-project/dsd/model"
)

// Harness makes backends for one test.
type Harness struct {
	// New returns a function that opens the same (initially empty) store each time it
	// is called: a call after Close is a restart.
	New func(t *testing.T) (open func() storage.Backend)
	// FailCommits makes every following Commit of b fail as a whole (on) or not (off).
	FailCommits func(b storage.Backend, on bool)
	// NoSubscriptions: the backend stores no subscription records (Change.Subs); it must
	// then refuse a group carrying any, whole, and apply nothing of it.
	NoSubscriptions bool
}

// Run runs the contract suite.
func Run(t *testing.T, h Harness) {
	tests := []struct {
		name string
		fn   func(t *testing.T, h Harness)
	}{
		{"CreateAndRead", testCreateAndRead},
		{"AppendsDeriveTheTail", testDerivedTail},
		{"Producers", testProducers},
		{"Snapshots", testSnapshots},
		{"ForkSegments", testForkSegments},
		{"DeleteAndRebind", testDeleteAndRebind},
		{"OrderWithinAGroup", testOrderWithinGroup},
		{"AllOrNothing", testAllOrNothing},
		{"Names", testNames},
		{"Buckets", testBuckets},
		{"SubscriptionKeySpaces", testKV},
		{"BucketIDs", testBucketIDs},
		{"CollectDeleted", testCollect},
		{"TrimRetained", testTrim},
		{"RestartIsReopen", testRestart},
		{"ReadsDuringCommits", testConcurrentReads},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, h) })
	}
}

// open opens a fresh store and closes it at the end of the test.
func open(t *testing.T, h Harness) (storage.Backend, func() storage.Backend) {
	t.Helper()
	reopen := h.New(t)
	b := reopen()
	t.Cleanup(func() { _ = b.Close() })
	return b, reopen
}

func commit(t *testing.T, b storage.Backend, group ...storage.Change) {
	t.Helper()
	for i, err := range b.Commit(group) {
		if err != nil {
			t.Fatalf("commit: change %d: %v", i, err)
		}
	}
}

// msgs lays out units as messages from off: one message per unit, flagged as unit ends.
func msgs(off uint64, units ...string) []storage.Message {
	out := make([]storage.Message, len(units))
	for i, u := range units {
		out[i] = storage.Message{Off: off, Val: append([]byte{storage.FlagUnitEnd}, u...)}
		off += uint64(len(u))
	}
	return out
}

func meta(sid uint64, bucket, stream, mt string, tail uint64) *storage.Meta {
	return &storage.Meta{ID: sid, Bucket: bucket, Stream: stream, ContentType: mt, MediaType: mt,
		CreatedMs: 1000, LastWriteMs: 1000, AccessMs: 1000, Tail: tail}
}

// create is the change that creates stream bucket/name as sid with units as its data.
func create(sid uint64, bucket, name, mt string, json bool, units ...string) storage.Change {
	ms := msgs(0, units...)
	m := meta(sid, bucket, name, mt, end(ms))
	if json {
		m.RecordNext = uint64(len(ms))
	}
	return storage.Change{SID: sid, Bind: &storage.Binding{Name: bucket + "/" + name, Bucket: bucket, SID: sid},
		Messages: ms, Records: json, Meta: m}
}

func end(ms []storage.Message) uint64 {
	if len(ms) == 0 {
		return 0
	}
	l := ms[len(ms)-1]
	return l.Off + l.Size()
}

// read returns the data of [start, tail) of segs, all of it.
func read(t *testing.T, b storage.Backend, segs []storage.Segment, start, tail uint64) string {
	t.Helper()
	var buf bytes.Buffer
	err := b.Messages(segs, start, tail, storage.Limits{Bytes: 1 << 30}, func(_ uint64, val []byte) {
		buf.Write(val[1:])
	})
	if err != nil {
		t.Fatalf("messages from %d: %v", start, err)
	}
	return buf.String()
}

func own(m *storage.Meta) []storage.Segment {
	return []storage.Segment{{SID: m.ID, From: 0, To: m.Tail}}
}

func mustStream(t *testing.T, b storage.Backend, name string) *storage.Meta {
	t.Helper()
	m, err := b.Stream(name)
	if err != nil || m == nil {
		t.Fatalf("stream %s: %v %v", name, m, err)
	}
	return m
}

func testCreateAndRead(t *testing.T, h Harness) {
	b, _ := open(t, h)
	commit(t, b, storage.Change{Bucket: &storage.BucketPut{ID: "bk", Record: &storage.BucketRecord{CreatedMs: 5}}})
	commit(t, b, create(7, "bk", "s", "application/json", true, `{"a":1}`+"\n", `[2]`+"\n", `3`+"\n"))
	m := mustStream(t, b, "bk/s")
	if m.ID != 7 || m.Tail != 14 || m.RecordNext != 3 || m.MediaType != "application/json" {
		t.Fatalf("meta %+v", m)
	}
	if sid, err := b.LastSID(); err != nil || sid != 7 {
		t.Fatalf("last sid %d %v", sid, err)
	}
	if im, bound, err := b.Incarnation(7); err != nil || im == nil || !bound || im.Tail != 14 {
		t.Fatalf("incarnation %+v %v %v", im, bound, err)
	}
	if im, _, err := b.Incarnation(8); err != nil || im != nil {
		t.Fatalf("missing incarnation: %+v %v", im, err)
	}
	if got := read(t, b, own(m), 0, m.Tail); got != `{"a":1}`+"\n[2]\n3\n" {
		t.Fatalf("data %q", got)
	}
	if got := read(t, b, own(m), 8, m.Tail); got != "[2]\n3\n" {
		t.Fatalf("data from 8: %q", got)
	}
	if err := b.Messages(own(m), 9, m.Tail, storage.One, nil); !errors.Is(err, model.ErrOffsetNotBoundary) {
		t.Fatalf("read inside a message: %v", err)
	}
	if at, val, err := b.MessageAt(own(m), 9); err != nil || at != 8 || string(val[1:]) != "[2]\n" {
		t.Fatalf("message at 9: %d %q %v", at, val, err)
	}
	if at, val, err := b.MessageAt(own(m), 0); err != nil || at != 0 || string(val[1:]) != `{"a":1}`+"\n" {
		t.Fatalf("message at 0: %d %q %v", at, val, err)
	}
	if _, _, err := b.MessageAt(own(m), m.Tail); !errors.Is(err, model.ErrOffsetNotBoundary) {
		t.Fatalf("message at the tail: %v", err)
	}
	var n int
	if err := b.Messages(own(m), 0, m.Tail, storage.One, func(uint64, []byte) { n++ }); err != nil || n != 1 {
		t.Fatalf("one message: %d %v", n, err)
	}
	n = 0
	if err := b.Messages(own(m), 0, m.Tail, storage.Limits{Bytes: 12}, func(uint64, []byte) { n++ }); err != nil || n != 2 {
		t.Fatalf("12 bytes: %d messages, %v", n, err)
	}
	for r, want := range []uint64{0, 8, 12} {
		if off, ok, err := b.RecordOffset(7, uint64(r)); err != nil || !ok || off != want {
			t.Fatalf("record %d: %d %v %v", r, off, ok, err)
		}
	}
	if _, ok, _ := b.RecordOffset(7, 3); ok {
		t.Fatal("record 3 exists")
	}
	for off, want := range map[uint64]uint64{0: 0, 8: 1, 12: 2, 14: 3} {
		if r, err := b.OrdinalAt(7, 0, 3, off); err != nil || r != want {
			t.Fatalf("ordinal at %d: %d %v", off, r, err)
		}
	}
	if rec, err := b.Bucket("bk"); err != nil || rec == nil || rec.Streams != 1 || rec.CreatedMs != 5 {
		t.Fatalf("bucket %+v %v", rec, err)
	}
	if m, err := b.Stream("bk/none"); err != nil || m != nil {
		t.Fatalf("missing stream: %+v %v", m, err)
	}
}

func testDerivedTail(t *testing.T, h Harness) {
	b, _ := open(t, h)
	commit(t, b, create(1, "bk", "j", "application/json", true, "1\n"))
	commit(t, b, storage.Change{SID: 1, Messages: msgs(2, "22\n", "333\n"), Records: true, FirstRecord: 1})
	m := mustStream(t, b, "bk/j")
	if m.Tail != 9 || m.RecordNext != 3 {
		t.Fatalf("derived tail %d, records %d", m.Tail, m.RecordNext)
	}
	if got := read(t, b, own(m), 0, m.Tail); got != "1\n22\n333\n" {
		t.Fatalf("data %q", got)
	}
	// A reader bounded by an older tail sees only what it covers.
	if got := read(t, b, own(m), 0, 5); got != "1\n22\n" {
		t.Fatalf("bounded read %q", got)
	}
}

func testProducers(t *testing.T, h Harness) {
	b, _ := open(t, h)
	commit(t, b, create(1, "bk", "p", "application/json", true))
	st := &storage.ProducerState{Epoch: 2, LastSeq: 0, Receipts: []storage.Receipt{{Seq: 0, End: 2, RecStart: 0, RecNext: 1}}}
	commit(t, b, storage.Change{SID: 1, Messages: msgs(0, "1\n"), Records: true,
		Producer: &storage.ProducerPut{ID: "w", State: st, Receipt: &st.Receipts[0]}})
	got, err := b.Producer(1, "w")
	if err != nil || got == nil || got.Epoch != 2 || got.LastSeq != 0 || len(got.Receipts) != 1 || got.Receipts[0] != st.Receipts[0] {
		t.Fatalf("producer %+v %v", got, err)
	}
	if r, ok, err := b.Receipt(1, model.Producer{ID: "w", Epoch: 2, Seq: 0}); err != nil || !ok || r != st.Receipts[0] {
		t.Fatalf("receipt %+v %v %v", r, ok, err)
	}
	if _, ok, _ := b.Receipt(1, model.Producer{ID: "w", Epoch: 1, Seq: 0}); ok {
		t.Fatal("receipt of another epoch")
	}
	if p, err := b.Producer(1, "other"); err != nil || p != nil {
		t.Fatalf("unknown producer %+v %v", p, err)
	}
}

func testSnapshots(t *testing.T, h Harness) {
	b, _ := open(t, h)
	c := create(1, "bk", "s", "text/plain", false, "ab", "cd")
	commit(t, b, c)
	m := *c.Meta
	m.Snapshot = &storage.Snapshot{Offset: 2, ContentType: "x/y", Digest: "d2", Size: 3}
	commit(t, b, storage.Change{SID: 1, Meta: &m, PutSnapshot: &storage.SnapshotBody{Offset: 2, Body: []byte("S@2")}})
	sm, body, err := b.SnapshotOf(1)
	if err != nil || sm == nil || sm.Snapshot == nil || sm.Snapshot.Digest != "d2" || string(body) != "S@2" {
		t.Fatalf("snapshot of: %+v %q %v", sm, body, err)
	}
	empty := m
	empty.Snapshot = &storage.Snapshot{Offset: 4, ContentType: "x/y", Digest: "d4"}
	commit(t, b, storage.Change{SID: 1, Meta: &empty, PutSnapshot: &storage.SnapshotBody{Offset: 4, Body: []byte{}}})
	if body, err := b.SnapshotBody(1, 4); err != nil || body == nil || len(body) != 0 {
		t.Fatalf("empty body: %v %v", body, err)
	}
	if body, err := b.SnapshotBody(1, 2); err != nil || string(body) != "S@2" {
		t.Fatalf("superseded body before it is dropped: %q %v", body, err)
	}
	off := uint64(2)
	commit(t, b, storage.Change{SID: 1, DropSnapshot: &off})
	if body, err := b.SnapshotBody(1, 2); err != nil || body != nil {
		t.Fatalf("dropped body: %q %v", body, err)
	}
	plain := m
	plain.Snapshot = nil
	commit(t, b, storage.Change{SID: 1, Meta: &plain})
	if sm, body, err := b.SnapshotOf(1); err != nil || sm.Snapshot != nil || body != nil {
		t.Fatalf("no snapshot: %+v %q %v", sm, body, err)
	}
}

func testForkSegments(t *testing.T, h Harness) {
	b, _ := open(t, h)
	src := create(1, "bk", "src", "text/plain", false, "aa", "bb", "cc")
	commit(t, b, src)
	fm := meta(2, "bk", "f", "text/plain", 6)
	fm.Fork = &storage.Fork{SourceID: 1, Anchor: 4, Chain: []storage.Segment{{SID: 1, From: 0, To: 4}}}
	refs := *src.Meta
	refs.Refs = 1
	commit(t, b, storage.Change{SID: 2, Bind: &storage.Binding{Name: "bk/f", Bucket: "bk", SID: 2},
		Messages: msgs(4, "FF"), Meta: fm, Also: []*storage.Meta{&refs}})
	if m := mustStream(t, b, "bk/src"); m.Refs != 1 {
		t.Fatalf("source refs %d", m.Refs)
	}
	segs := []storage.Segment{{SID: 1, From: 0, To: 4}, {SID: 2, From: 4, To: 6}}
	if got := read(t, b, segs, 0, 6); got != "aabbFF" {
		t.Fatalf("fork reads %q", got)
	}
	if got := read(t, b, segs, 2, 6); got != "bbFF" {
		t.Fatalf("fork from 2 reads %q", got)
	}
	if got := read(t, b, segs, 4, 6); got != "FF" {
		t.Fatalf("fork from 4 reads %q", got)
	}
}

func testDeleteAndRebind(t *testing.T, h Harness) {
	b, _ := open(t, h)
	commit(t, b, storage.Change{Bucket: &storage.BucketPut{ID: "bk", Record: &storage.BucketRecord{}}})
	commit(t, b, create(1, "bk", "s", "text/plain", false, "one"))
	commit(t, b, storage.Change{SID: 1, Unbind: []storage.Binding{{Name: "bk/s", Bucket: "bk", SID: 1}}})
	if m, err := b.Stream("bk/s"); err != nil || m != nil {
		t.Fatalf("deleted stream: %+v %v", m, err)
	}
	if m, _, err := b.Incarnation(1); err != nil || m != nil {
		t.Fatalf("deleted incarnation: %+v %v", m, err)
	}
	if rec, _ := b.Bucket("bk"); rec.Streams != 0 {
		t.Fatalf("bucket count %d after delete", rec.Streams)
	}
	if trash, err := b.Trash(10); err != nil || len(trash) != 1 || trash[0] != 1 {
		t.Fatalf("trash %v %v", trash, err)
	}
	commit(t, b, create(2, "bk", "s", "text/plain", false, "two"))
	m := mustStream(t, b, "bk/s")
	if m.ID != 2 || read(t, b, own(m), 0, m.Tail) != "two" {
		t.Fatalf("re-created %+v", m)
	}
	// Unbinding an incarnation whose name moved on leaves the new binding alone.
	commit(t, b, storage.Change{SID: 1, Unbind: []storage.Binding{{Name: "bk/s", Bucket: "bk", SID: 1}}})
	if m := mustStream(t, b, "bk/s"); m.ID != 2 {
		t.Fatalf("binding moved to %d", m.ID)
	}
	if rec, _ := b.Bucket("bk"); rec.Streams != 1 {
		t.Fatalf("bucket count %d", rec.Streams)
	}
}

func testOrderWithinGroup(t *testing.T, h Harness) {
	b, _ := open(t, h)
	c := create(1, "bk", "s", "text/plain", false, "a")
	m2 := *c.Meta
	m2.Closed, m2.Tail = true, 2
	// Create, append and close in one group: the last meta wins, data of every change stays.
	commit(t, b, c, storage.Change{SID: 1, Messages: msgs(1, "b")}, storage.Change{SID: 1, Meta: &m2})
	m := mustStream(t, b, "bk/s")
	if !m.Closed || m.Tail != 2 || read(t, b, own(m), 0, 2) != "ab" {
		t.Fatalf("after one group: %+v", m)
	}
	// Delete and re-create the same name in one group: the new incarnation is bound, and
	// a meta of the deleted one changed earlier in the group is not written.
	m3 := m2
	m3.Attrs = []byte(`{}`)
	commit(t, b, storage.Change{SID: 1, Meta: &m3},
		storage.Change{SID: 1, Unbind: []storage.Binding{{Name: "bk/s", Bucket: "bk", SID: 1}}},
		create(2, "bk", "s", "text/plain", false, "new"))
	if m := mustStream(t, b, "bk/s"); m.ID != 2 {
		t.Fatalf("bound to %d", m.ID)
	}
	if m, _, _ := b.Incarnation(1); m != nil {
		t.Fatalf("deleted incarnation's meta was written: %+v", m)
	}
}

func testAllOrNothing(t *testing.T, h Harness) {
	b, _ := open(t, h)
	commit(t, b, create(1, "bk", "s", "text/plain", false, "a"))
	h.FailCommits(b, true)
	errs := b.Commit([]storage.Change{{SID: 1, Messages: msgs(1, "b")}, create(2, "bk", "t", "text/plain", false, "x")})
	h.FailCommits(b, false)
	if len(errs) != 2 || errs[0] == nil || errs[1] == nil {
		t.Fatalf("failed group reported %v", errs)
	}
	if m := mustStream(t, b, "bk/s"); m.Tail != 1 {
		t.Fatalf("tail %d after a failed group", m.Tail)
	}
	if m, _ := b.Stream("bk/t"); m != nil {
		t.Fatal("a stream created by a failed group exists")
	}
	if sid, _ := b.LastSID(); sid != 1 {
		t.Fatalf("last sid %d after a failed group", sid)
	}
	if err := b.Probe(); err != nil {
		t.Fatalf("probe: %v", err)
	}
	commit(t, b, storage.Change{SID: 1, Messages: msgs(1, "b")})
	if m := mustStream(t, b, "bk/s"); m.Tail != 2 {
		t.Fatalf("tail %d after recovery", m.Tail)
	}
}

func testNames(t *testing.T, h Harness) {
	b, _ := open(t, h)
	for i, n := range []string{"b", "a", "ab", "c"} {
		commit(t, b, create(uint64(i+1), "bk", n, "text/plain", false))
	}
	commit(t, b, create(9, "zz", "a", "text/plain", false))
	list := func(prefix, seek string, max int) []string {
		var out []string
		err := b.Names(prefix, seek, func(name string, m *storage.Meta) bool {
			if m == nil || m.Key() != name {
				t.Fatalf("name %s with meta %+v", name, m)
			}
			out = append(out, name)
			return len(out) < max
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	check := func(got []string, want ...string) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("names %v, want %v", got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("names %v, want %v", got, want)
			}
		}
	}
	check(list("bk/", "bk/", 10), "bk/a", "bk/ab", "bk/b", "bk/c")
	check(list("bk/a", "bk/a", 10), "bk/a", "bk/ab")
	check(list("bk/", "bk/a\x00", 10), "bk/ab", "bk/b", "bk/c")
	check(list("bk/", "bk/", 2), "bk/a", "bk/ab")
	check(list("", "", 10), "bk/a", "bk/ab", "bk/b", "bk/c", "zz/a")
}

func testBuckets(t *testing.T, h Harness) {
	b, _ := open(t, h)
	commit(t, b, storage.Change{Bucket: &storage.BucketPut{ID: "bk", Record: &storage.BucketRecord{CreatedMs: 9}}})
	commit(t, b, create(1, "bk", "s", "text/plain", false), create(2, "nob", "s", "text/plain", false))
	if rec, err := b.Bucket("bk"); err != nil || rec == nil || rec.Streams != 1 {
		t.Fatalf("bucket %+v %v", rec, err)
	}
	if rec, err := b.Bucket("nob"); err != nil || rec != nil {
		t.Fatalf("a stream's create made bucket %+v %v", rec, err)
	}
	commit(t, b, storage.Change{SID: 1, Unbind: []storage.Binding{{Name: "bk/s", Bucket: "bk", SID: 1}}})
	commit(t, b, storage.Change{Bucket: &storage.BucketPut{ID: "bk"}})
	if rec, err := b.Bucket("bk"); err != nil || rec != nil {
		t.Fatalf("deleted bucket %+v %v", rec, err)
	}
}

// kvKeys lists a space's keys under prefix, in visit order, as "key=value".
func kvKeys(t *testing.T, b storage.Backend, space, prefix string) string {
	t.Helper()
	var out []string
	if err := b.KVScan(space, []byte(prefix), func(k, v []byte) bool {
		out = append(out, string(k)+"="+string(v))
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, " ")
}

// The subscription key spaces: puts, deletes and prefix deletes apply in order with the
// rest of the change, scans are in byte order within the prefix, spaces are separate, and
// everything survives a reopen.
func testKV(t *testing.T, h Harness) {
	b, reopen := open(t, h)
	put := func(space, k, v string) storage.KVPut {
		return storage.KVPut{Space: space, Key: []byte(k), Value: []byte(v)}
	}
	if h.NoSubscriptions {
		errs := b.Commit([]storage.Change{create(1, "bk", "s", "text/plain", false, "x"),
			{Subs: []storage.KVPut{put(storage.SpaceSubs, "b\x00s", "1")}}})
		if errs[0] == nil || errs[1] == nil {
			t.Fatalf("a group with subscription records was not refused whole: %v", errs)
		}
		if m, err := b.Stream("bk/s"); err != nil || m != nil {
			t.Fatalf("a refused group applied its stream: %+v %v", m, err)
		}
		// Deletes of subscription records (a bucket delete cleans them up) delete nothing.
		del := storage.KVPut{Space: storage.SpaceSubs, Key: []byte("b\x00"), Prefix: true}
		if errs := b.Commit([]storage.Change{{Subs: []storage.KVPut{del}}}); errs[0] != nil {
			t.Fatalf("a group deleting subscription records was refused: %v", errs[0])
		}
		return
	}
	commit(t, b, storage.Change{Subs: []storage.KVPut{put(storage.SpaceSubs, "b\x00s2", "2"),
		put(storage.SpaceSubs, "b\x00s1", "1"), put(storage.SpaceSubs, "c\x00s1", "c"),
		put(storage.SpaceLinks, "b\x00s1\x00x", "lx"), put(storage.SpaceLinks, "b\x00s1\x00y", "ly"),
		put(storage.SpaceKeys, "sign_keys", "k"), put(storage.SpaceSubs, "b\x00s2", "2b")}},
		create(1, "bk", "s", "text/plain", false, "x"))
	if got := kvKeys(t, b, storage.SpaceSubs, "b\x00"); got != "b\x00s1=1 b\x00s2=2b" {
		t.Fatalf("scan %q", got)
	}
	if v, err := b.KV(storage.SpaceKeys, []byte("sign_keys")); err != nil || string(v) != "k" {
		t.Fatalf("keys %q %v", v, err)
	}
	if v, err := b.KV(storage.SpaceSubs, []byte("sign_keys")); err != nil || v != nil {
		t.Fatalf("spaces are separate: %q %v", v, err)
	}
	commit(t, b, storage.Change{Subs: []storage.KVPut{{Space: storage.SpaceLinks, Key: []byte("b\x00s1\x00"), Prefix: true},
		{Space: storage.SpaceSubs, Key: []byte("b\x00s1")}, put(storage.SpaceLinks, "b\x00s1\x00z", "lz")}})
	if got := kvKeys(t, b, storage.SpaceLinks, ""); got != "b\x00s1\x00z=lz" {
		t.Fatalf("after the prefix delete %q", got)
	}
	if v, err := b.KV(storage.SpaceSubs, []byte("b\x00s1")); err != nil || v != nil {
		t.Fatalf("deleted key %q %v", v, err)
	}
	_ = b.Close()
	b = reopen()
	t.Cleanup(func() { _ = b.Close() })
	if got := kvKeys(t, b, storage.SpaceSubs, ""); got != "b\x00s2=2b c\x00s1=c" {
		t.Fatalf("after reopen %q", got)
	}
}

func testCollect(t *testing.T, h Harness) {
	b, _ := open(t, h)
	units := make([]string, 10)
	for i := range units {
		units[i] = "x\n"
	}
	c := create(1, "bk", "s", "application/json", true, units...)
	st := &storage.ProducerState{Epoch: 1}
	commit(t, b, c, storage.Change{SID: 1, Producer: &storage.ProducerPut{ID: "p", State: st, Receipt: &storage.Receipt{Seq: 0, End: 20}}})
	commit(t, b, storage.Change{SID: 1, Unbind: []storage.Binding{{Name: "bk/s", Bucket: "bk", SID: 1}}})
	rounds := 0
	for ; rounds < 100; rounds++ {
		done, err := b.Collect(1, 4)
		if err != nil {
			t.Fatal(err)
		}
		if done {
			break
		}
	}
	if rounds < 2 {
		t.Fatalf("collected 20+ items 4 at a time in %d rounds", rounds+1)
	}
	if trash, _ := b.Trash(10); len(trash) != 0 {
		t.Fatalf("trash after collect: %v", trash)
	}
	if p, _ := b.Producer(1, "p"); p != nil {
		t.Fatal("producer survived collection")
	}
	if _, ok, _ := b.RecordOffset(1, 0); ok {
		t.Fatal("record survived collection")
	}
	if err := b.Messages([]storage.Segment{{SID: 1, From: 0, To: 20}}, 0, 20, storage.One, nil); !errors.Is(err, model.ErrOffsetNotBoundary) {
		t.Fatalf("data survived collection: %v", err)
	}
}

func testTrim(t *testing.T, h Harness) {
	b, _ := open(t, h)
	c := create(1, "bk", "s", "application/json", true, "0\n", "1\n", "2\n", "3\n")
	commit(t, b, c)
	m := *c.Meta
	m.RetainedFrom, m.RecordFirst = 4, 2
	commit(t, b, storage.Change{SID: 1, Meta: &m, Retained: true})
	if trims, err := b.Trims(); err != nil || len(trims) != 1 || trims[0] != 1 {
		t.Fatalf("trims %v %v", trims, err)
	}
	for i := 0; ; i++ {
		done, err := b.Trim(1, 1)
		if err != nil {
			t.Fatal(err)
		}
		if done {
			break
		}
		if i > 10 {
			t.Fatal("trim does not finish")
		}
	}
	if trims, _ := b.Trims(); len(trims) != 0 {
		t.Fatalf("trims after trim: %v", trims)
	}
	if got := read(t, b, own(&m), 4, m.Tail); got != "2\n3\n" {
		t.Fatalf("retained data %q", got)
	}
	if err := b.Messages(own(&m), 0, m.Tail, storage.One, nil); !errors.Is(err, model.ErrOffsetNotBoundary) {
		t.Fatalf("trimmed data readable: %v", err)
	}
	if _, ok, _ := b.RecordOffset(1, 1); ok {
		t.Fatal("trimmed record kept")
	}
	if off, ok, _ := b.RecordOffset(1, 2); !ok || off != 4 {
		t.Fatalf("record 2: %d %v", off, ok)
	}
	if got := mustStream(t, b, "bk/s"); got.Tail != 8 || got.RecordNext != 4 {
		t.Fatalf("meta after trim %+v", got)
	}
}

func testRestart(t *testing.T, h Harness) {
	reopen := h.New(t)
	b := reopen()
	commit(t, b, storage.Change{Bucket: &storage.BucketPut{ID: "bk", Record: &storage.BucketRecord{CreatedMs: 3}}})
	c := create(4, "bk", "s", "application/json", true, "1\n")
	m := *c.Meta
	m.Snapshot = &storage.Snapshot{Offset: 2, Digest: "d"}
	st := &storage.ProducerState{Epoch: 1, LastSeq: 0}
	commit(t, b, c, storage.Change{SID: 4, Messages: msgs(2, "2\n"), Records: true, FirstRecord: 1,
		Producer: &storage.ProducerPut{ID: "p", State: st, Receipt: &storage.Receipt{Seq: 0, End: 4, RecStart: 1, RecNext: 2}}},
		storage.Change{SID: 4, Meta: &m, PutSnapshot: &storage.SnapshotBody{Offset: 2, Body: []byte("S")}})
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b = reopen()
	defer b.Close()
	got := mustStream(t, b, "bk/s")
	if got.Tail != 4 || got.RecordNext != 2 || got.Snapshot == nil || got.Snapshot.Digest != "d" {
		t.Fatalf("after restart: %+v", got)
	}
	if sid, _ := b.LastSID(); sid != 4 {
		t.Fatalf("last sid %d", sid)
	}
	if read(t, b, own(got), 0, 4) != "1\n2\n" {
		t.Fatal("data lost in restart")
	}
	if p, _ := b.Producer(4, "p"); p == nil || p.Epoch != 1 {
		t.Fatalf("producer after restart %+v", p)
	}
	if r, ok, _ := b.Receipt(4, model.Producer{ID: "p", Epoch: 1, Seq: 0}); !ok || r.RecNext != 2 {
		t.Fatalf("receipt after restart %+v", r)
	}
	if _, body, _ := b.SnapshotOf(4); string(body) != "S" {
		t.Fatalf("snapshot body after restart %q", body)
	}
	if rec, _ := b.Bucket("bk"); rec == nil || rec.Streams != 1 || rec.CreatedMs != 3 {
		t.Fatalf("bucket after restart %+v", rec)
	}
}

// Reads running while groups commit see whole groups: a stream's data up to any tail it
// reports is all there (run with -race).
func testConcurrentReads(t *testing.T, h Harness) {
	b, _ := open(t, h)
	commit(t, b, create(1, "bk", "s", "text/plain", false))
	const appends = 200
	done := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				m, err := b.Stream("bk/s")
				if err != nil || m == nil {
					errs <- fmt.Errorf("stream: %v %v", m, err)
					return
				}
				n := uint64(0)
				err = b.Messages(own(m), 0, m.Tail, storage.Limits{Bytes: 1 << 30}, func(_ uint64, val []byte) { n += uint64(len(val) - 1) })
				if m.Tail > 0 && (err != nil || n != m.Tail) {
					errs <- fmt.Errorf("read %d of tail %d: %v", n, m.Tail, err)
					return
				}
			}
		}()
	}
	for i := 0; i < appends; i++ {
		commit(t, b, storage.Change{SID: 1, Messages: msgs(uint64(i)*2, "ab")})
	}
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if m := mustStream(t, b, "bk/s"); m.Tail != 2*appends {
		t.Fatalf("tail %d", m.Tail)
	}
}
