package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/dsd-project/dsd/model"
)

// evictAll unloads every idle stream, as a sweep does past Options.LoadedStreams, and
// returns how many it unloaded.
func (te *testEngine) evictAll() int {
	te.t.Helper()
	if err := te.waitDurable(te.queuedLSN()); err != nil { // an op settles just after its caller returns
		te.t.Fatal(err)
	}
	limit := te.opts.LoadedStreams
	te.opts.LoadedStreams = 0
	defer func() { te.opts.LoadedStreams = limit }()
	return te.evictIdle()
}

func (te *testEngine) loaded() int {
	te.mu.RLock()
	defer te.mu.RUnlock()
	return len(te.byID)
}

// An evicted stream reloads exactly: tail, producer states (duplicates, gaps, epochs),
// closure and its closer, JSON record ordinals, Stream-Seq.
func TestEvictReloadKeepsTailsProducersClosure(t *testing.T) {
	te := newTestEngine(t)
	te.mustCreate("p", "text/plain", "")
	te.mustCreate("c", "text/plain", "x")
	te.mustCreate("j", "application/json", "[1,2]")
	app := func(name string, epoch, seq uint64, body string) (AppendResult, error) {
		return te.Append(key(name), AppendRequest{MediaType: "text/plain", Body: []byte(body),
			Producer: &model.Producer{ID: "w", Epoch: epoch, Seq: seq}})
	}
	for seq, b := range []string{"a", "b"} {
		if _, err := app("p", 0, uint64(seq), b); err != nil {
			t.Fatal(err)
		}
	}
	closer := &model.Producer{ID: "k", Epoch: 2, Seq: 0}
	if _, err := te.Append(key("c"), AppendRequest{MediaType: "text/plain", Body: []byte("y"), Close: true, Producer: closer}); err != nil {
		t.Fatal(err)
	}
	seq := "s5"
	if _, err := te.Append(key("j"), AppendRequest{MediaType: "application/json", Body: []byte(`[3]`), StreamSeq: &seq}); err != nil {
		t.Fatal(err)
	}
	if n := te.evictAll(); n != 3 || te.loaded() != 0 {
		t.Fatalf("evicted %d, %d still loaded; want 3 and 0", n, te.loaded())
	}

	if dup, err := app("p", 0, 1, "b"); err != nil || dup.Outcome != Duplicate || dup.Tail != off(2) {
		t.Fatalf("retry of the last seq after reload: %+v %v", dup, err)
	}
	var gap *model.SeqGapError
	if _, err := app("p", 0, 3, "d"); !errors.As(err, &gap) || gap.Expected != 2 {
		t.Fatalf("gap after reload: %v", err)
	}
	var stale *model.StaleEpochError
	if _, err := te.Append(key("c"), AppendRequest{MediaType: "text/plain", Body: []byte("z"),
		Producer: &model.Producer{ID: "k", Epoch: 1, Seq: 1}}); !errors.As(err, &stale) && !errors.As(err, new(*model.ClosedError)) {
		t.Fatalf("older epoch on a closed stream: %v", err)
	}
	te.evictAll()
	if r, err := te.Append(key("c"), AppendRequest{Close: true, Producer: closer}); err != nil || r.Outcome != ClosedOnly || !r.ProducerAck {
		t.Fatalf("closer's retry after reload: %+v %v", r, err)
	}
	var closed *model.ClosedError
	if _, err := te.Append(key("c"), AppendRequest{MediaType: "text/plain", Body: []byte("z")}); !errors.As(err, &closed) || closed.Final != off(2) {
		t.Fatalf("append to the closed stream after reload: %v", err)
	}
	te.evictAll()
	old := "s4"
	if _, err := te.Append(key("j"), AppendRequest{MediaType: "application/json", Body: []byte(`[4]`), StreamSeq: &old}); !errors.Is(err, model.ErrStreamSeqConflict) {
		t.Fatalf("stale Stream-Seq after reload: %v", err)
	}
	r, err := te.Append(key("j"), AppendRequest{MediaType: "application/json", Body: []byte(`[4]`)})
	if err != nil || r.RecordStart != 3 || r.RecordNext != 4 {
		t.Fatalf("JSON append after reload: %+v %v", r, err)
	}
	if got := string(te.readAll("p").Data); got != "ab" {
		t.Fatalf("p reads %q", got)
	}
	if res := te.readAll("c"); string(res.Data) != "xy" || !res.EOF {
		t.Fatalf("c reads %q %+v", res.Data, res)
	}
}

// Forks and their sources evict and reload independently: inherited data, reference
// counts (soft delete while referenced, cascade when the last fork goes).
func TestEvictReloadKeepsForks(t *testing.T) {
	te := newTestEngine(t)
	te.mustCreate("a", "text/plain", "A")
	if _, err := te.Create(key("b"), forkReq("a", nil, 0)); err != nil {
		t.Fatal(err)
	}
	te.evictAll()
	te.mustAppend("a", "text/plain", "a")
	te.mustAppend("b", "text/plain", "B")
	te.evictAll()
	if err := te.Delete(key("a")); err != nil {
		t.Fatal(err)
	}
	te.evictAll()
	if _, err := te.Head(key("a")); !errors.Is(err, model.ErrStreamGone) {
		t.Fatalf("soft-deleted source after reload: %v", err)
	}
	if got := string(te.readAll("b").Data); got != "AB" {
		t.Fatalf("fork reads %q after reload", got)
	}
	te.evictAll()
	if err := te.Delete(key("b")); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a", "b"} {
		if _, err := te.Head(key(n)); !errors.Is(err, model.ErrStreamNotFound) {
			t.Fatalf("after cascade, head %s: %v", n, err)
		}
	}
}

// A stream with a live reader (and so its waiters) stays loaded; the reader is woken by
// the next append. A stream whose op is committed but not yet published is not evicted.
func TestEvictSparesLiveReadersAndUnpublishedOps(t *testing.T) {
	te := newTestEngine(t)
	te.mustCreate("w", "text/plain", "")
	te.mustCreate("idle", "text/plain", "")
	r, _, err := te.OpenReader(key("w"))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := r.Wait(context.Background(), 0)
		done <- err
	}()
	if n := te.evictAll(); n != 1 || te.loaded() != 1 {
		t.Fatalf("evicted %d, %d loaded; want the idle stream only", n, te.loaded())
	}
	te.mustAppend("w", "text/plain", "x")
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter was not woken by the append")
	}
	r.Close()

	var inHook int
	te.opts.LoadedStreams = 0
	hook := func() { inHook += te.evictIdle() } // on the committer: evictAll would wait for itself
	te.pubHook.Store(&hook)
	te.mustAppend("w", "text/plain", "y")
	te.pubHook.Store(nil)
	te.opts.LoadedStreams = 200000
	if inHook != 0 {
		t.Fatalf("evicted %d streams between a commit and its publication", inHook)
	}
	if got := string(te.readAll("w").Data); got != "xy" {
		t.Fatalf("w reads %q", got)
	}
}

// Writers racing with eviction never lose or duplicate an append: each acknowledged
// offset is unique and the stream holds exactly the acknowledged bytes.
func TestEvictRacesWithWriters(t *testing.T) {
	te := newTestEngine(t)
	const streams, writers, per = 4, 8, 40
	for i := range streams {
		te.mustCreate(fmt.Sprint("r", i), "text/plain", "")
	}
	stopEvicting := inBackground(func() { te.evictAll() })
	var wg sync.WaitGroup
	var mu sync.Mutex
	tails := map[string]map[model.Offset]bool{}
	for w := range writers {
		wg.Go(func() {
			for i := range per {
				name := fmt.Sprint("r", (w+i)%streams)
				r, err := te.Append(key(name), AppendRequest{MediaType: "text/plain", Body: []byte("z")})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if tails[name] == nil {
					tails[name] = map[model.Offset]bool{}
				}
				if tails[name][r.Tail] {
					t.Errorf("%s: tail %v acknowledged twice", name, r.Tail)
				}
				tails[name][r.Tail] = true
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	stopEvicting()
	total := 0
	for i := range streams {
		name := fmt.Sprint("r", i)
		n := len(te.readAll(name).Data)
		if n != len(tails[name]) {
			t.Fatalf("%s holds %d bytes, %d appends acknowledged", name, n, len(tails[name]))
		}
		total += n
	}
	if total != writers*per {
		t.Fatalf("%d bytes stored, want %d", total, writers*per)
	}
}

// inBackground runs f over and over in a goroutine until the returned stop is called;
// stop returns once the last run is over.
func inBackground(f func()) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
				f()
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

// BenchmarkListPage lists one page of 100 from the middle of a bucket of 20,000 streams.
func BenchmarkListPage(b *testing.B) {
	e := benchEngine(b, true)
	for i := range 20000 {
		benchCreate(b, e, i, "text/plain")
	}
	b.ResetTimer()
	for b.Loop() {
		l, err := e.ListStreams("bench", ListQuery{After: "s5000", Limit: 100})
		if err != nil || len(l.Streams) != 100 {
			b.Fatal(len(l.Streams), err)
		}
	}
}

// BenchmarkAppendAfterEvict is the cost of an append to a stream that was unloaded (its
// reload from storage included) against one to a loaded stream.
func BenchmarkAppendAfterEvict(b *testing.B) {
	for _, evict := range []bool{false, true} {
		b.Run(fmt.Sprintf("evicted=%v", evict), func(b *testing.B) {
			e := benchEngine(b, true)
			benchCreate(b, e, 0, "text/plain")
			body := []byte("0123456789")
			b.ReportAllocs()
			for b.Loop() {
				if evict {
					e.opts.LoadedStreams = 0
					for e.evictIdle() != 1 { // the last append settles just after it returns
						runtime.Gosched()
					}
				}
				if _, err := e.Append(bkey(0), AppendRequest{MediaType: "text/plain", Body: body}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// Expiry passes over every stored stream are skipped once one found no stream with a
// lifetime, until such a stream is created: it then still expires on time, loaded or
// not, and leaves its bucket's count. Spec: A-14, extension §1.3.
func TestExpiryScansResumeWhenALifetimeIsCreated(t *testing.T) {
	te := newTestEngine(t)
	te.mustCreate("plain", "text/plain", "")
	te.expireStored()
	if te.mayHaveLifetimes() {
		t.Fatal("a scan that found no lifetime left the expiry scans on")
	}
	at := te.clk.now().Add(time.Second)
	if _, err := te.Create(key("e"), CreateRequest{ContentType: "text/plain", MediaType: "text/plain", ExpiresAt: &at}); err != nil {
		t.Fatal(err)
	}
	if !te.mayHaveLifetimes() {
		t.Fatal("creating a stream with an expiry did not turn the scans back on")
	}
	te.evictAll()
	te.clk.advance(2 * time.Second)
	if b, err := te.Bucket("test"); err != nil || b.Streams != 1 {
		t.Fatalf("bucket after the expiry: %+v %v, want 1 live stream", b, err)
	}
	if _, err := te.Head(key("e")); !errors.Is(err, model.ErrStreamNotFound) {
		t.Fatalf("head after expiry: %v", err)
	}
}
