package engine

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsd-project/dsd/model"
)

// Attributes: replaced whole, allowed after close, invisible to everything else.
// Spec: extension §5.3, §5.4.
func TestAttrs(t *testing.T) {
	te := newTestEngine(t)
	te.mustCreate("a", "text/plain", "x")
	before := te.readAll("a")
	attrs, _ := model.NormalizeAttrs([]byte(`{"title":"T","metadata":{"k":1},"junk":true}`))
	if err := te.SetAttrs(key("a"), attrs); err != nil {
		t.Fatal(err)
	}
	if _, err := te.Append(key("a"), AppendRequest{Close: true}); err != nil {
		t.Fatal(err)
	}
	if err := te.SetAttrs(key("a"), nil); err != nil {
		t.Fatalf("set after close: %v", err)
	}
	te.reopen()
	got, err := te.Attrs(key("a"))
	if err != nil || got != nil {
		t.Fatalf("cleared attrs: %s %v", got, err)
	}
	after := te.readAll("a")
	if string(after.Data) != string(before.Data) || after.Info.ID != before.Info.ID {
		t.Fatalf("attrs changed the stream: %+v", after)
	}
	if string(attrs) != `{"metadata":{"k":1},"title":"T"}` {
		t.Fatalf("normalized %s", attrs)
	}
}

// Each frame is its own append with its own acknowledgement; a failing frame assigns
// nothing and later frames continue. Spec: extension §4.3, §4.4, §6.11.
func TestAppendBatch(t *testing.T) {
	te := newTestEngine(t)
	te.mustCreate("b", "application/json", "")
	frames := [][]byte{[]byte(`{"n":1}`), []byte(`[2,3]`), []byte(`{`), []byte(`4`)}
	acks, isJSON, err := te.AppendBatch(key("b"), "application/json", frames)
	if err != nil || !isJSON || len(acks) != 4 {
		t.Fatal(acks, err)
	}
	want := []struct {
		err        error
		tail       uint64
		start, nxt uint64
	}{{nil, 8, 0, 1}, {nil, 12, 1, 3}, {model.ErrInvalidJSON, 12, 3, 3}, {nil, 14, 3, 4}}
	for i, w := range want {
		a := acks[i]
		if !errors.Is(a.Err, w.err) || uint64(a.Tail) != w.tail || a.RecordStart != w.start || a.RecordNext != w.nxt {
			t.Errorf("frame %d: %+v, want %+v", i, a, w)
		}
	}
	if got := string(te.readAll("b").Data); got != "{\"n\":1}\n2\n3\n4\n" {
		t.Fatalf("data %q", got)
	}
	acks, _, _ = te.AppendBatch(key("b"), "text/plain", [][]byte{[]byte("x")})
	if !errors.Is(acks[0].Err, model.ErrContentTypeMismatch) {
		t.Fatalf("type mismatch frame: %+v", acks[0])
	}
}

// Offsets from a batch equal the ones single appends would produce.
// Spec: extension §4.4.
func TestBatchOffsetsMatchSingleAppends(t *testing.T) {
	te := newTestEngine(t)
	te.mustCreate("single", "text/plain", "")
	te.mustCreate("batch", "text/plain", "")
	var frames [][]byte
	var singles []model.Offset
	for i := 0; i < 20; i++ {
		f := fmt.Sprintf("frame-%d|", i)
		frames = append(frames, []byte(f))
		singles = append(singles, te.mustAppend("single", "text/plain", f).Tail)
	}
	acks, _, err := te.AppendBatch(key("batch"), "text/plain", frames)
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range acks {
		if a.Tail != singles[i] {
			t.Fatalf("frame %d at %v, single append at %v", i, a.Tail, singles[i])
		}
	}
	if te.readAll("batch").Info.Tail != te.readAll("single").Info.Tail {
		t.Fatal("tails differ")
	}
}

func publish(te *testEngine, name string, off uint64, ct, body string) (SnapshotInfo, error) {
	return te.PublishSnapshot(key(name), SnapshotRequest{At: Position{Offset: model.Offset(off)}, ContentType: ct, Body: []byte(body)})
}

// Snapshot publish rules, retention rules and their 410s.
// Spec: extension §2.2, §2.5, §2.6, D5.
func TestSnapshotsAndRetention(t *testing.T) {
	te := newTestEngine(t)
	te.mustCreate("s", "text/plain", "aaa")
	te.mustAppend("s", "text/plain", "bbb")
	te.mustAppend("s", "text/plain", "ccc")
	if _, err := publish(te, "s", 4, "", "x"); !errors.Is(err, model.ErrOffsetNotBoundary) {
		t.Fatalf("unaligned: %v", err)
	}
	if _, err := publish(te, "s", 12, "", "x"); !errors.Is(err, model.ErrSnapshotPastTail) {
		t.Fatalf("past tail: %v", err)
	}
	if _, err := te.SetRetention(key("s"), Position{Offset: 3}); !errors.Is(err, model.ErrRetentionInvalid) {
		t.Fatalf("retention without snapshot: %v", err)
	}
	info, err := publish(te, "s", 6, "application/x-state", "STATE@6")
	if err != nil || info.Digest != SnapshotDigest("application/x-state", []byte("STATE@6")) {
		t.Fatalf("publish: %+v %v", info, err)
	}
	if again, err := publish(te, "s", 6, "application/x-state", "STATE@6"); err != nil || again.Digest != info.Digest {
		t.Fatalf("republish: %+v %v", again, err)
	}
	if _, err := publish(te, "s", 6, "application/x-state", "OTHER"); !errors.Is(err, model.ErrSnapshotConflict) {
		t.Fatalf("different content at same offset: %v", err)
	}
	if err := te.DeleteSnapshot(key("s"), 6); !errors.Is(err, model.ErrSnapshotLatest) {
		t.Fatalf("delete of the latest snapshot before retention: %v, want SNAPSHOT_IN_USE (D5)", err)
	}
	if err := te.DeleteSnapshot(key("s"), 3); !errors.Is(err, model.ErrSnapshotNotFound) {
		t.Fatalf("delete of an unknown snapshot: %v", err)
	}
	match := "sha256:nope"
	if _, err := te.PublishSnapshot(key("s"), SnapshotRequest{At: Position{Offset: 9}, Body: []byte("y"), Match: &match}); !errors.Is(err, model.ErrSnapshotMatch) {
		t.Fatalf("match failure: %v", err)
	}
	if _, err := te.SetRetention(key("s"), Position{Offset: 9}); !errors.Is(err, model.ErrRetentionInvalid) {
		t.Fatalf("retention past snapshot: %v", err)
	}
	if _, err := te.SetRetention(key("s"), Position{Offset: 6}); err != nil {
		t.Fatal(err)
	}
	if _, err := te.SetRetention(key("s"), Position{Offset: 3}); !errors.Is(err, model.ErrRetentionInvalid) {
		t.Fatalf("backward retention: %v", err)
	}
	if _, err := te.Read(key("s"), ReadRequest{From: model.OffsetSpec{Kind: model.SpecAt, At: 3}}); !errors.Is(err, model.ErrOffsetGone) {
		t.Fatalf("read below retention: %v", err)
	}
	var gone *model.RetainedError
	if _, err := te.Read(key("s"), ReadRequest{From: model.OffsetSpec{Kind: model.SpecStart}}); !errors.As(err, &gone) || gone.Start != 6 {
		t.Fatalf("read from -1 after retention: %v, want 410 naming offset 6 (D2)", err)
	}
	if res, err := te.Read(key("s"), ReadRequest{From: model.OffsetSpec{Kind: model.SpecAt, At: 6}}); err != nil || string(res.Data) != "ccc" {
		t.Fatalf("read from the retained start: %q %v", res.Data, err)
	}
	if err := te.DeleteSnapshot(key("s"), 6); !errors.Is(err, model.ErrSnapshotLatest) {
		t.Fatalf("delete needed snapshot: %v", err)
	}
	if _, err := publish(te, "s", 3, "", "old"); !errors.Is(err, model.ErrOffsetGone) {
		t.Fatalf("snapshot below retention: %v", err)
	}
	te.trimRetained()
	te.reopen()
	_, body, err := te.Snapshot(key("s"), nil)
	if err != nil || string(body) != "STATE@6" {
		t.Fatalf("snapshot after reopen: %q %v", body, err)
	}
	b, err := te.OpenBootstrap(key("s"))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	res, _ := b.Next(1 << 20)
	if string(b.Body) != "STATE@6" || b.From != 6 || string(res.Data) != "ccc" || len(res.Ends) != 1 {
		t.Fatalf("bootstrap: %q from %v, %q", b.Body, b.From, res.Data)
	}
}

// Record coordinates: reads by record, tail_records, 410 below F, 400 past N; retention
// by record keeps ordinals. Spec: extension §6.1, §6.6, §6.10, §6.13.
func TestRecordReads(t *testing.T) {
	te := newTestEngine(t)
	te.mustCreate("r", "application/json", `[0,1,2,3,4]`)
	read := func(rs RecordSpec, max int) (ReadResult, error) {
		return te.Read(key("r"), ReadRequest{Record: &rs, MaxMessages: max})
	}
	res, err := read(RecordSpec{Kind: RecordAt, N: 2}, 2)
	if err != nil || string(res.Data) != "2\n3\n" || res.RecordStart != 2 || res.RecordNext != 4 || res.UpToDate {
		t.Fatalf("record=2 max 2: %q %+v %v", res.Data, res, err)
	}
	if res, _ := read(RecordSpec{Kind: RecordTail, N: 2}, 0); string(res.Data) != "3\n4\n" || res.RecordStart != 3 {
		t.Fatalf("tail_records=2: %q", res.Data)
	}
	if res, _ := read(RecordSpec{Kind: RecordTail, N: 99}, 0); res.RecordStart != 0 {
		t.Fatalf("tail_records=99 starts at %d", res.RecordStart)
	}
	if res, _ := read(RecordSpec{Kind: RecordAt, N: 5}, 0); len(res.Data) != 0 || !res.UpToDate || res.RecordNext != 5 {
		t.Fatalf("record=N: %+v", res)
	}
	var rr *model.RecordRangeError
	if _, err := read(RecordSpec{Kind: RecordAt, N: 6}, 0); !errors.As(err, &rr) || rr.Gone || rr.Next != 5 {
		t.Fatalf("record>N: %v", err)
	}
	if _, err := te.PublishSnapshot(key("r"), SnapshotRequest{At: Position{Record: 3, ByRecord: true}, Body: []byte("s")}); err != nil {
		t.Fatal(err)
	}
	if _, err := te.SetRetention(key("r"), Position{Record: 3, ByRecord: true}); err != nil {
		t.Fatal(err)
	}
	te.trimRetained()
	te.reopen()
	if _, err := read(RecordSpec{Kind: RecordAt, N: 2}, 0); !errors.As(err, &rr) || !rr.Gone || rr.First != 3 {
		t.Fatalf("record<F: %v", err)
	}
	info, _ := te.Head(key("r"))
	if info.RecordFirst != 3 || info.RecordNext != 5 {
		t.Fatalf("F,N = %d,%d", info.RecordFirst, info.RecordNext)
	}
	a := te.mustAppend("r", "application/json", `[5,6]`)
	if a.RecordStart != 5 || a.RecordNext != 7 {
		t.Fatalf("append after retention: %+v", a)
	}
	if res, _ := read(RecordSpec{Kind: RecordAt, N: 3}, 0); string(res.Data) != "3\n4\n5\n6\n" {
		t.Fatalf("record=3 after restart and retention: %q", res.Data)
	}
}

// A steady append + snapshot + retention loop keeps the data file bounded: trimmed pages
// are reused. Spec: extension §2.2 (storage below retention is freed).
func TestRetentionKeepsDataFileBounded(t *testing.T) {
	fileOnly(t)
	te := newTestEngine(t)
	te.mustCreate("loop", "application/octet-stream", "")
	payload := strings.Repeat("z", 16<<10)
	size := func() int64 {
		fi, err := os.Stat(te.Path())
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	var afterWarmup int64
	const rounds, perRound = 80, 64 // 80 MiB written; the data file grows 16 MiB at a time
	for r := 0; r < rounds; r++ {
		var tail model.Offset
		for i := 0; i < perRound; i++ {
			tail = te.mustAppend("loop", "application/octet-stream", payload).Tail
		}
		if _, err := te.PublishSnapshot(key("loop"), SnapshotRequest{At: Position{Offset: tail}, Body: []byte("state")}); err != nil {
			t.Fatal(err)
		}
		if _, err := te.SetRetention(key("loop"), Position{Offset: tail}); err != nil {
			t.Fatal(err)
		}
		te.trimRetained()
		if r == 5 {
			afterWarmup = size()
		}
	}
	written := int64(rounds * perRound * len(payload))
	final := size()
	t.Logf("wrote %d KiB of data; file %d KiB after warm-up, %d KiB at the end", written>>10, afterWarmup>>10, final>>10)
	if final > 2*afterWarmup || final > written/2 {
		t.Fatalf("data file grew to %d bytes (warm-up %d, written %d)", final, afterWarmup, written)
	}
}

// A bootstrap opened between a commit and its publication waits for the publication
// (KI-5: it must not show readers a write before ordinary reads do), then returns every
// message up to its Stream-Next-Offset, none missing from an older tail cache.
// Regression test of conformance and linearizability findings (X-3.2-01, X-3.4-03).
func TestBootstrapAheadOfTailCache(t *testing.T) {
	te := newTestEngine(t)
	te.mustCreate("bc", "text/plain", "start|")
	release := make(chan struct{})
	held := make(chan struct{})
	hook := func() { close(held); <-release }
	te.pubHook.Store(&hook)
	done := make(chan struct{})
	go func() {
		defer close(done)
		te.mustAppend("bc", "text/plain", "m000|")
	}()
	<-held
	te.pubHook.Store(nil)
	opened := make(chan *Bootstrap)
	go func() {
		b, err := te.OpenBootstrap(key("bc"))
		if err != nil {
			t.Error(err)
		}
		opened <- b
	}()
	select {
	case <-opened:
		t.Fatal("bootstrap opened before the commit it reads was published")
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	b := <-opened
	<-done
	if b == nil {
		return
	}
	res, err := b.Next(1 << 20)
	b.Close()
	if err != nil || string(res.Data) != "start|m000|" || res.Next != b.Info.Tail {
		t.Fatalf("bootstrap read %q up to %v, view tail %v (%v)", res.Data, res.Next, b.Info.Tail, err)
	}
}

// holdPublication blocks the committer between its next commit and that commit's
// publication until release is called.
func holdPublication(te *testEngine) (held <-chan struct{}, release func()) {
	h, r := make(chan struct{}), make(chan struct{})
	var once sync.Once
	hook := func() { once.Do(func() { close(h); <-r }) }
	te.pubHook.Store(&hook)
	return h, func() { te.pubHook.Store(nil); close(r) }
}

// A snapshot publish is judged against the decided retention boundary: a retention that
// is queued but not yet published still makes an older snapshot offset 410, so a
// snapshot can never end up below the retained start (extension §2.2, §3.4).
func TestSnapshotBelowQueuedRetention(t *testing.T) {
	te := newTestEngine(t)
	te.mustCreate("sr", "text/plain", "abcd")
	te.mustAppend("sr", "text/plain", "abcd")
	te.mustAppend("sr", "text/plain", "abcd")
	if _, err := publish(te, "sr", 8, "", "S8"); err != nil {
		t.Fatal(err)
	}
	held, release := holdPublication(te)
	retained := make(chan error, 1)
	go func() {
		_, err := te.SetRetention(key("sr"), Position{Offset: 8})
		retained <- err
	}()
	<-held
	published := make(chan error, 1)
	go func() {
		_, err := publish(te, "sr", 4, "", "S4")
		published <- err
	}()
	time.Sleep(20 * time.Millisecond)
	release()
	if err := <-retained; err != nil {
		t.Fatal(err)
	}
	if err := <-published; !errors.Is(err, model.ErrOffsetGone) {
		t.Fatalf("snapshot below the queued retention: %v", err)
	}
}

// A fork made while a newer source snapshot is committed but not yet published inherits
// the published snapshot with its own body, never another snapshot's.
func TestForkInheritsTheSnapshotItNames(t *testing.T) {
	te := newTestEngine(t)
	te.mustCreate("fs", "text/plain", "abcd")
	te.mustAppend("fs", "text/plain", "abcd")
	te.mustAppend("fs", "text/plain", "abcd")
	if _, err := publish(te, "fs", 4, "", "S4"); err != nil {
		t.Fatal(err)
	}
	held, release := holdPublication(te)
	go publish(te, "fs", 8, "", "S8")
	<-held
	forked := make(chan error, 1)
	go func() {
		_, err := te.Create(key("ff"), forkReq("fs", nil, 0))
		forked <- err
	}()
	time.Sleep(20 * time.Millisecond)
	release()
	if err := <-forked; err != nil {
		t.Fatal(err)
	}
	info, body, err := te.Snapshot(key("ff"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if SnapshotDigest("application/octet-stream", body) != info.Snapshot.Digest {
		t.Fatalf("fork snapshot at %v has body %q that does not match its digest", info.Snapshot.Offset, body)
	}
}
