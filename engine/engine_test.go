package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/dsd-project/dsd/model"
)

func off(n uint64) model.Offset { return model.Offset(n) }

// An append lands at the tail and every read returns exactly the appended bytes.
// Spec: docs/spec/base-protocol.md B-4-01, B-5.2-09, B-5.6-01.
func TestAppendThenReadReturnsTheBytes(t *testing.T) {
	te := newTestEngine(t)
	if r := te.mustCreate("s", "text/plain", "hello"); r.Info.Tail != off(5) || !r.Created {
		t.Fatalf("create: %+v", r)
	}
	if r := te.mustAppend("s", "text/plain", " world"); r.Tail != off(11) || r.Outcome != Appended {
		t.Fatalf("append: %+v", r)
	}
	res := te.readAll("s")
	if string(res.Data) != "hello world" || res.Next != off(11) || !res.UpToDate || res.EOF {
		t.Fatalf("read: %q %+v", res.Data, res)
	}
}

// Reads start only at message boundaries, never beyond the tail.
// Spec: A-15, D2.
func TestReadOffsetRules(t *testing.T) {
	te := newTestEngine(t)
	te.mustCreate("s", "text/plain", "abc")
	te.mustAppend("s", "text/plain", "def")
	cases := []struct {
		from model.OffsetSpec
		want string
		err  error
	}{
		{model.OffsetSpec{Kind: model.SpecAt, At: 3}, "def", nil},
		{model.OffsetSpec{Kind: model.SpecAt, At: 6}, "", nil},
		{model.OffsetSpec{Kind: model.SpecNow}, "", nil},
		{model.OffsetSpec{Kind: model.SpecAt, At: 2}, "", model.ErrOffsetNotBoundary},
		{model.OffsetSpec{Kind: model.SpecAt, At: 7}, "", model.ErrOffsetBeyondTail},
	}
	for _, c := range cases {
		res, err := te.Read(key("s"), ReadRequest{From: c.from})
		if !errors.Is(err, c.err) || (err == nil && string(res.Data) != c.want) {
			t.Errorf("read from %v: %q, %v; want %q, %v", c.from, res.Data, err, c.want, c.err)
		}
	}
}

// JSON streams store each flattened message as compact JSON plus "\n"; offsets count
// those canonical bytes. Spec: B-9.1-02, D3.
func TestJSONCanonicalOffsets(t *testing.T) {
	te := newTestEngine(t)
	r := te.mustCreate("j", "application/json", `[ {"a": 1}, [2, 3] ]`)
	if r.Info.Tail != off(uint64(len("{\"a\":1}\n[2,3]\n"))) || r.RecordNext != 2 {
		t.Fatalf("create: %+v", r)
	}
	a := te.mustAppend("j", "application/json; charset=utf-8", `"x"`)
	if a.RecordStart != 2 || a.RecordNext != 3 {
		t.Fatalf("append records: %+v", a)
	}
	if got := string(te.readAll("j").Data); got != "{\"a\":1}\n[2,3]\n\"x\"\n" {
		t.Fatalf("canonical bytes %q", got)
	}
	res, err := te.Read(key("j"), ReadRequest{From: model.OffsetSpec{Kind: model.SpecAt, At: 8}})
	if err != nil || string(res.Data) != "[2,3]\n\"x\"\n" {
		t.Fatalf("read at second message: %q %v", res.Data, err)
	}
	if _, err := te.Append(key("j"), AppendRequest{MediaType: "application/json", Body: []byte("[]")}); !errors.Is(err, model.ErrEmptyJSONArray) {
		t.Fatalf("append []: %v", err)
	}
}

// Spec: B-5.2-02, A-07 (content type after closure).
func TestContentTypeMismatch(t *testing.T) {
	te := newTestEngine(t)
	te.mustCreate("s", "text/plain", "")
	if _, err := te.Append(key("s"), AppendRequest{MediaType: "application/json", Body: []byte("1")}); !errors.Is(err, model.ErrContentTypeMismatch) {
		t.Fatalf("got %v", err)
	}
}

// The producer validation table, row by row. Spec: B-5.2.1-03, B-5.2.1-04, A-08.
func TestProducerTable(t *testing.T) {
	te := newTestEngine(t)
	te.mustCreate("p", "text/plain", "")
	app := func(epoch, seq uint64, body string) (AppendResult, error) {
		return te.Append(key("p"), AppendRequest{MediaType: "text/plain", Body: []byte(body),
			Producer: &model.Producer{ID: "w", Epoch: epoch, Seq: seq}})
	}
	var gap *model.SeqGapError
	if _, err := app(0, 1, "x"); !errors.As(err, &gap) || gap.Expected != 0 || gap.Received != 1 {
		t.Fatalf("unknown producer seq 1: %v", err)
	}
	r0, err := app(0, 0, "a")
	if err != nil || r0.Outcome != Appended || r0.Tail != off(1) {
		t.Fatalf("seq 0: %+v %v", r0, err)
	}
	if _, err := app(0, 1, "b"); err != nil {
		t.Fatal(err)
	}
	dup, err := app(0, 0, "a")
	if err != nil || dup.Outcome != Duplicate || dup.ProducerSeq != 1 || dup.Tail != off(2) {
		t.Fatalf("dup of seq 0: %+v %v", dup, err)
	}
	dup1, _ := app(0, 1, "b")
	if dup1.Outcome != Duplicate || dup1.Tail != off(2) {
		t.Fatalf("dup of last seq: %+v", dup1)
	}
	if _, err := app(0, 3, "c"); !errors.As(err, &gap) || gap.Expected != 2 || gap.Received != 3 {
		t.Fatalf("gap: %v", err)
	}
	if _, err := app(1, 1, "c"); !errors.Is(err, model.ErrEpochSeqNotZero) {
		t.Fatalf("epoch bump with seq 1: %v", err)
	}
	if r, err := app(1, 0, "c"); err != nil || r.Outcome != Appended {
		t.Fatalf("epoch bump: %+v %v", r, err)
	}
	var stale *model.StaleEpochError
	if _, err := app(0, 2, "z"); !errors.As(err, &stale) || stale.Current != 1 {
		t.Fatalf("stale epoch: %v", err)
	}
	if got := string(te.readAll("p").Data); got != "abc" {
		t.Fatalf("data %q", got)
	}
}

// Closure: appends after close fail with the final offset; close-only is idempotent; the
// closing producer tuple deduplicates, a close-only with another tuple is 409.
// Spec: B-4-04, B-5.2-07, B-5.2-10, B-5.2.1-09, D9.
func TestClosure(t *testing.T) {
	te := newTestEngine(t)
	te.mustCreate("c", "text/plain", "x")
	p := &model.Producer{ID: "w", Epoch: 0, Seq: 0}
	r, err := te.Append(key("c"), AppendRequest{MediaType: "text/plain", Body: []byte("y"), Close: true, Producer: p})
	if err != nil || !r.Closed || r.Tail != off(2) {
		t.Fatalf("append-and-close: %+v %v", r, err)
	}
	var closed *model.ClosedError
	if _, err := te.Append(key("c"), AppendRequest{MediaType: "text/plain", Body: []byte("z")}); !errors.As(err, &closed) || closed.Final != off(2) {
		t.Fatalf("append after close: %v", err)
	}
	if r, err := te.Append(key("c"), AppendRequest{Close: true}); err != nil || r.Outcome != ClosedOnly || !r.Closed {
		t.Fatalf("close again: %+v %v", r, err)
	}
	if r, err := te.Append(key("c"), AppendRequest{Close: true, Producer: p}); err != nil || r.Outcome != ClosedOnly || !r.ProducerAck {
		t.Fatalf("close-only retry of the closing tuple: %+v %v", r, err)
	}
	other := &model.Producer{ID: "v", Epoch: 0, Seq: 0}
	if _, err := te.Append(key("c"), AppendRequest{Close: true, Producer: other}); !errors.As(err, &closed) || closed.Final != off(2) {
		t.Fatalf("close-only with another tuple: %v, want 409 with the final offset (D9)", err)
	}
	if r, err := te.Append(key("c"), AppendRequest{MediaType: "text/plain", Body: []byte("other"), Producer: p}); err != nil || r.Outcome != Duplicate {
		t.Fatalf("closer retry: %+v %v", r, err)
	}
	res := te.readAll("c")
	if string(res.Data) != "xy" || !res.EOF {
		t.Fatalf("read: %q %+v", res.Data, res)
	}
}

// Stream-Seq is compared as raw bytes and must strictly increase. Spec: B-5.2-05, A-06.
func TestStreamSeq(t *testing.T) {
	te := newTestEngine(t)
	te.mustCreate("q", "text/plain", "")
	seq := func(s string) error {
		_, err := te.Append(key("q"), AppendRequest{MediaType: "text/plain", Body: []byte("."), StreamSeq: &s})
		return err
	}
	for _, step := range []struct {
		seq string
		err error
	}{{"09", nil}, {"10", nil}, {"10", model.ErrStreamSeqConflict}, {"2", nil}, {"10", model.ErrStreamSeqConflict}} {
		if err := seq(step.seq); !errors.Is(err, step.err) {
			t.Fatalf("Stream-Seq %q: %v, want %v", step.seq, err, step.err)
		}
	}
}

// Re-create with the same configuration answers 200; a different one 409.
// Spec: B-5.1-01, B-5.1-02, B-5.1-14.
func TestIdempotentCreate(t *testing.T) {
	te := newTestEngine(t)
	ttl := uint64(60)
	req := CreateRequest{ContentType: "application/json", MediaType: "application/json", TTL: &ttl}
	if r, err := te.Create(key("i"), req); err != nil || !r.Created {
		t.Fatal(r, err)
	}
	if r, err := te.Create(key("i"), req); err != nil || r.Created {
		t.Fatalf("same config: %+v %v", r, err)
	}
	other := uint64(61)
	req.TTL = &other
	if _, err := te.Create(key("i"), req); !errors.Is(err, model.ErrConfigMismatch) {
		t.Fatalf("other TTL: %v", err)
	}
	req.TTL, req.Closed = &ttl, true
	if _, err := te.Create(key("i"), req); !errors.Is(err, model.ErrConfigMismatch) {
		t.Fatalf("closed vs open: %v", err)
	}
	if _, err := te.Create(model.StreamKey{Bucket: "nope", Stream: "x"}, req); !errors.Is(err, model.ErrBucketNotFound) {
		t.Fatalf("missing bucket: %v", err)
	}
}

// Everything acknowledged survives a reopen: data, closure, producer state, Stream-Seq.
// Spec: B-4-04, B-5.2.1-07, D4.
func TestStateSurvivesReopen(t *testing.T) {
	te := newTestEngine(t)
	te.mustCreate("r", "text/plain", "a")
	seq := "5"
	p := &model.Producer{ID: "w", Epoch: 2, Seq: 0}
	if _, err := te.Append(key("r"), AppendRequest{MediaType: "text/plain", Body: []byte("b"), Producer: p, StreamSeq: &seq}); err != nil {
		t.Fatal(err)
	}
	if _, err := te.Append(key("r"), AppendRequest{Close: true}); err != nil {
		t.Fatal(err)
	}
	te.reopen()
	res := te.readAll("r")
	if string(res.Data) != "ab" || !res.EOF {
		t.Fatalf("after reopen: %q %+v", res.Data, res)
	}
	var closed *model.ClosedError
	if _, err := te.Append(key("r"), AppendRequest{MediaType: "text/plain", Body: []byte("b"), Producer: p}); !errors.As(err, &closed) {
		t.Fatalf("non-closing producer on a closed stream after reopen: %v", err)
	}
	te.mustCreate("r2", "text/plain", "")
	if _, err := te.Append(key("r2"), AppendRequest{MediaType: "text/plain", Body: []byte("b"), Producer: p}); err != nil {
		t.Fatal(err)
	}
	te.reopen()
	r, err := te.Append(key("r2"), AppendRequest{MediaType: "text/plain", Body: []byte("b"), Producer: p})
	if err != nil || r.Outcome != Duplicate || r.Tail != off(1) {
		t.Fatalf("producer dedup after reopen: %+v %v", r, err)
	}
	info, _ := te.Head(key("r2"))
	if info.ID <= 1 {
		t.Fatalf("incarnation ids must keep growing across reopens: %d", info.ID)
	}
}

// Delete then re-create: a new incarnation starting at the zero offset, nothing of the
// old data or producers. Spec: B-4-03, A-28.
func TestDeleteAndRecreate(t *testing.T) {
	te := newTestEngine(t)
	first := te.mustCreate("d", "text/plain", "old")
	if err := te.Delete(key("d")); err != nil {
		t.Fatal(err)
	}
	if _, err := te.Head(key("d")); !errors.Is(err, model.ErrStreamNotFound) {
		t.Fatalf("head after delete: %v", err)
	}
	if err := te.Delete(key("d")); !errors.Is(err, model.ErrStreamNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	second := te.mustCreate("d", "text/plain", "")
	if second.Info.ID == first.Info.ID || second.Info.Tail != 0 {
		t.Fatalf("re-create: %+v", second)
	}
	if res := te.readAll("d"); len(res.Data) != 0 {
		t.Fatalf("old data visible: %q", res.Data)
	}
	te.collectTrash()
	te.reopen()
	if res := te.readAll("d"); len(res.Data) != 0 {
		t.Fatalf("old data visible after reopen: %q", res.Data)
	}
}

// A sliding TTL restarts on reads and writes, not on HEAD; Expires-At is absolute.
// Spec: B-5.1-04, B-5.1-08, A-14.
func TestExpiry(t *testing.T) {
	te := newTestEngine(t)
	ttl := uint64(10)
	if _, err := te.Create(key("t"), CreateRequest{ContentType: "text/plain", MediaType: "text/plain", TTL: &ttl}); err != nil {
		t.Fatal(err)
	}
	te.clk.advance(8 * time.Second)
	te.readAll("t") // restarts the window
	te.clk.advance(8 * time.Second)
	if _, err := te.Head(key("t")); err != nil {
		t.Fatalf("head inside window: %v", err)
	}
	te.clk.advance(3 * time.Second)
	if _, err := te.Head(key("t")); !errors.Is(err, model.ErrStreamNotFound) {
		t.Fatalf("head after expiry: %v", err)
	}
	if r := te.mustCreate("t", "text/plain", ""); !r.Created {
		t.Fatalf("PUT after expiry must create: %+v", r)
	}
}

// Concurrent appenders get disjoint, contiguous ranges in commit order, and the stream
// holds exactly their bytes. Spec: A-26, B-8-01.
func TestConcurrentAppends(t *testing.T) {
	te := newTestEngine(t)
	te.mustCreate("c", "application/octet-stream", "")
	const writers, each = 8, 50
	var wg sync.WaitGroup
	ends := make(chan model.Offset, writers*each)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				r, err := te.Append(key("c"), AppendRequest{MediaType: "application/octet-stream", Body: []byte(fmt.Sprintf("%02d%03d", w, i))})
				if err != nil {
					t.Error(err)
					return
				}
				ends <- r.Tail
			}
		}(w)
	}
	wg.Wait()
	close(ends)
	seen := map[model.Offset]bool{}
	for e := range ends {
		if e%5 != 0 || seen[e] {
			t.Fatalf("bad or repeated end offset %d", e)
		}
		seen[e] = true
	}
	data := te.readAll("c").Data
	if len(data) != writers*each*5 {
		t.Fatalf("length %d", len(data))
	}
	perWriter := map[string]int{}
	for i := 0; i < len(data); i += 5 {
		w, n := string(data[i:i+2]), 0
		fmt.Sscanf(string(data[i+2:i+5]), "%d", &n)
		if n != perWriter[w] {
			t.Fatalf("writer %s: message %d out of order (want %d)", w, n, perWriter[w])
		}
		perWriter[w]++
	}
}

// A waiting reader wakes on the commit of new data, and on closure.
// Spec: B-5.7-02, B-5.7-06, D4 (waiters woken after commit).
func TestReaderWaitWakes(t *testing.T) {
	te := newTestEngine(t)
	te.mustCreate("w", "text/plain", "")
	r, _, err := te.OpenReader(key("w"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	done := make(chan error, 1)
	go func() {
		_, err := r.Wait(context.Background(), 0)
		done <- err
	}()
	time.Sleep(10 * time.Millisecond)
	te.mustAppend("w", "text/plain", "x")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := r.Wait(ctx, 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("wait at tail: %v", err)
	}
	if _, err := te.Append(key("w"), AppendRequest{Close: true}); err != nil {
		t.Fatal(err)
	}
	if info, err := r.Wait(context.Background(), 1); err != nil || !info.Closed {
		t.Fatalf("wait after close: %+v %v", info, err)
	}
}

// Reads served from the tail cache and from storage agree byte for byte.
func TestTailCacheAgreesWithStorage(t *testing.T) {
	te := newTestEngine(t)
	te.mustCreate("tc", "application/octet-stream", "")
	var want bytes.Buffer
	for i := 0; i < 300; i++ {
		b := bytes.Repeat([]byte{byte(i)}, 1+i%1500)
		want.Write(b)
		te.mustAppend("tc", "application/octet-stream", string(b))
	}
	cached := te.readAll("tc").Data
	te.reopen()
	stored := te.readAll("tc").Data
	if !bytes.Equal(cached, want.Bytes()) || !bytes.Equal(stored, want.Bytes()) {
		t.Fatalf("cache %d bytes, storage %d bytes, want %d", len(cached), len(stored), want.Len())
	}
}

// Idle tail caches are dropped; reads then come from storage and stay identical, and the
// cache refills with the next appends.
func TestIdleCachesAreDropped(t *testing.T) {
	te := newTestEngine(t)
	te.mustCreate("ic", "text/plain", "a")
	te.mustAppend("ic", "text/plain", "b")
	te.dropIdleCaches(-time.Hour)
	s, _ := te.lookup(key("ic").String())
	if n := len(s.cache.msgs); n != 0 {
		t.Fatalf("%d cached messages after drop", n)
	}
	te.mustAppend("ic", "text/plain", "c")
	if got := string(te.readAll("ic").Data); got != "abc" {
		t.Fatalf("read %q", got)
	}
	if n := len(s.cache.msgs); n != 1 {
		t.Fatalf("cache holds %d messages after one append", n)
	}
}

// Plain appends skip rewriting the meta; reopening derives the tail and the record tail
// from the stored entries, so nothing acknowledged is misplaced. Spec: D4, extension
// §6.13 (restart keeps ordinals).
func TestReopenDerivesTailFromEntries(t *testing.T) {
	te := newTestEngine(t)
	te.mustCreate("dj", "application/json", `[1]`)
	var last AppendResult
	for i := 0; i < 50; i++ {
		last = te.mustAppend("dj", "application/json", `[2,3]`)
	}
	te.reopen()
	info, err := te.Head(key("dj"))
	if err != nil || info.Tail != last.Tail || info.RecordNext != last.RecordNext || info.RecordNext != 101 {
		t.Fatalf("after reopen: %+v %v; last ack %+v", info, err, last)
	}
	a := te.mustAppend("dj", "application/json", `4`)
	if a.RecordStart != 101 || a.Tail != last.Tail+2 {
		t.Fatalf("append after reopen: %+v", a)
	}
}

// Any deduplicated producer retry on a JSON stream gets its original record range back,
// however old its seq, also after a reopen. Spec: extension §6.3 (X-6.3-05).
func TestDuplicateGetsOriginalRecordRange(t *testing.T) {
	te := newTestEngine(t)
	te.mustCreate("pr", "application/json", "")
	app := func(seq uint64, body string) AppendResult {
		r, err := te.Append(key("pr"), AppendRequest{MediaType: "application/json", Body: []byte(body),
			Producer: &model.Producer{ID: "p", Epoch: 0, Seq: seq}})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for i := uint64(0); i < 20; i++ {
		app(i, `[1,2]`)
	}
	te.reopen()
	for _, seq := range []uint64{0, 5, 19} {
		r := app(seq, `[1,2]`)
		if r.Outcome != Duplicate || r.RecordStart != 2*seq || r.RecordNext != 2*seq+2 {
			t.Fatalf("retry of seq %d: %+v", seq, r)
		}
	}
}

// A text stream may be read from the held position inside a message, where SSE stopped
// before an incomplete UTF-8 sequence, from the tail cache and from storage; nowhere
// else inside a message, and never on a binary stream. Spec: D9, A-15.
func TestReadFromHeldPosition(t *testing.T) {
	te := newTestEngine(t)
	te.mustCreate("t", "text/plain", "caf\xc3")
	te.mustAppend("t", "text/plain", "\xa9!")
	te.mustCreate("b", "application/octet-stream", "caf\xc3")
	check := func(when string) {
		t.Helper()
		res, err := te.Read(key("t"), ReadRequest{From: model.OffsetSpec{Kind: model.SpecAt, At: 3}, Bounds: true})
		if err != nil || string(res.Data) != "\xc3\xa9!" || res.Start != 3 || res.Next != 6 || len(res.Ends) != 2 || res.Ends[0] != 1 {
			t.Fatalf("%s: read from the held position: %q %+v %v", when, res.Data, res, err)
		}
		for _, k := range []string{"t", "b"} {
			at := model.Offset(2)
			if k == "b" {
				at = 3
			}
			if _, err := te.Read(key(k), ReadRequest{From: model.OffsetSpec{Kind: model.SpecAt, At: at}}); !errors.Is(err, model.ErrOffsetNotBoundary) {
				t.Fatalf("%s: read of %s inside a message at %d: %v", when, k, at, err)
			}
		}
	}
	check("cached")
	te.reopen()
	check("from storage")
}

// From a held position the message after the held bytes comes along even when it alone
// exceeds the read's size target. Spec: D9, A-16.
func TestReadFromHeldPositionTakesTheNextMessage(t *testing.T) {
	te := newTestEngine(t)
	te.mustCreate("t", "text/plain", "caf\xc3")
	te.mustAppend("t", "text/plain", "\xa9 and more than four bytes")
	te.mustAppend("t", "text/plain", "!")
	res, err := te.Read(key("t"), ReadRequest{From: model.OffsetSpec{Kind: model.SpecAt, At: 3}, MaxBytes: 4})
	if err != nil || string(res.Data) != "\xc3\xa9 and more than four bytes" || res.UpToDate {
		t.Fatalf("read from the held position: %q %+v %v", res.Data, res, err)
	}
}
