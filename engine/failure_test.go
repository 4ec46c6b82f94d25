package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dsd-project/dsd/engine/memstore"
	"github.com/dsd-project/dsd/engine/storage"
	"github.com/dsd-project/dsd/model"
)

// logCounter counts log records by level while a test runs.
type logCounter struct {
	mu     sync.Mutex
	counts map[slog.Level]int
	msgs   []string
}

func (c *logCounter) Enabled(context.Context, slog.Level) bool { return true }
func (c *logCounter) Handle(_ context.Context, r slog.Record) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts[r.Level]++
	c.msgs = append(c.msgs, r.Message)
	return nil
}
func (c *logCounter) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *logCounter) WithGroup(string) slog.Handler      { return c }

func (c *logCounter) count(l slog.Level) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counts[l]
}

func countLogs(t *testing.T) *logCounter {
	c := &logCounter{counts: map[slog.Level]int{}}
	old := slog.Default()
	slog.SetDefault(slog.New(c))
	t.Cleanup(func() { slog.SetDefault(old) })
	return c
}

// untilWritable appends body to name until it succeeds (bounded by 5 s: D4's target).
func untilWritable(t *testing.T, te *testEngine, name, body string) AppendResult {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		res, err := te.Append(key(name), AppendRequest{MediaType: "text/plain", Body: []byte(body)})
		if err == nil {
			return res
		}
		if !errors.Is(err, model.ErrStorageFailed) || time.Now().After(deadline) {
			t.Fatalf("append after the store recovered: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A failed commit puts the engine in the failed state: writes are refused with a generic
// ErrStorageFailed (no path, no OS error), nothing unacknowledged is visible, the cause is
// logged once; once a probe commit succeeds writes resume without a restart, and the
// recovery is logged once. Spec: D4 (amended 2026-12).
func TestStorageFailureRecovers(t *testing.T) {
	logs := countLogs(t)
	te := newTestEngine(t)
	te.mustCreate("x", "text/plain", "ok")
	te.setFault(errors.New("disk on fire at /secret/path"))
	for i := 0; i < 3; i++ {
		_, err := te.Append(key("x"), AppendRequest{MediaType: "text/plain", Body: []byte("lost")})
		if !errors.Is(err, model.ErrStorageFailed) || strings.Contains(err.Error(), "secret") {
			t.Fatalf("append during failure: %v", err)
		}
	}
	if _, err := te.Create(key("y"), CreateRequest{ContentType: "text/plain", MediaType: "text/plain"}); !errors.Is(err, model.ErrStorageFailed) {
		t.Fatalf("create during failure: %v", err)
	}
	if got := string(te.readAll("x").Data); got != "ok" {
		t.Fatalf("reads %q during the failure", got)
	}
	time.Sleep(2 * probeEvery) // probes fail meanwhile
	te.setFault(nil)
	res := untilWritable(t, te, "x", "|later")
	if res.Tail != 8 {
		t.Fatalf("tail %d after recovery: the failed append left decided state behind", res.Tail)
	}
	if got := string(te.readAll("x").Data); got != "ok|later" {
		t.Fatalf("reads %q after recovery", got)
	}
	if _, err := te.Head(key("y")); !errors.Is(err, model.ErrStreamNotFound) {
		t.Fatalf("a create that failed is visible: %v", err)
	}
	te.mustCreate("y", "text/plain", "y")
	if n := logs.count(slog.LevelError); n != 1 {
		t.Fatalf("%d error log lines for one failure: %q", n, logs.msgs)
	}
	if n := logs.count(slog.LevelInfo); n != 1 {
		t.Fatalf("%d info log lines for one recovery: %q", n, logs.msgs)
	}
	te.reopen()
	if got := string(te.readAll("x").Data); got != "ok|later" {
		t.Fatalf("reads %q after reopen", got)
	}
}

// Recovery resets every decided change the failed commits held: a producer's seq, the
// record tail, a deletion, a fork's reference. Spec: D4 (amended), B-5.2.1-03, §6.
func TestRecoveryResetsDecidedState(t *testing.T) {
	te := newTestEngine(t)
	te.mustCreate("j", "application/json", `[1]`)
	te.mustCreate("d", "text/plain", "keep")
	p := &model.Producer{ID: "w", Epoch: 0, Seq: 0}
	te.setFault(errors.New("injected"))
	if _, err := te.Append(key("j"), AppendRequest{MediaType: "application/json", Body: []byte(`[2,3]`), Producer: p}); !errors.Is(err, model.ErrStorageFailed) {
		t.Fatalf("append: %v", err)
	}
	te.setFault(nil)
	untilWritable(t, te, "d", "!")
	res, err := te.Append(key("j"), AppendRequest{MediaType: "application/json", Body: []byte(`[4]`), Producer: p})
	if err != nil || res.Outcome != Appended || res.RecordStart != 1 || res.RecordNext != 2 {
		t.Fatalf("producer seq 0 after the failed attempt: %+v %v", res, err)
	}
	if got := string(te.readAll("j").Data); got != "1\n4\n" {
		t.Fatalf("reads %q", got)
	}
	te.setFault(errors.New("injected"))
	if err := te.Delete(key("d")); !errors.Is(err, model.ErrStorageFailed) {
		t.Fatalf("delete: %v", err)
	}
	te.setFault(nil)
	untilWritable(t, te, "d", "?")
	if got := string(te.readAll("d").Data); got != "keep!?" {
		t.Fatalf("reads %q after a failed delete", got)
	}
}

// newConflictEngine returns a test engine on the memory backend with streams a and b,
// whose commits of a change of a fail with storage.ErrConflict while conflict is true (at
// first); it skips the test on the other backends.
func newConflictEngine(t *testing.T) (te *testEngine, conflict *atomic.Bool) {
	t.Helper()
	if !onMemory() {
		t.Skip("needs the memory backend's per-stream faults (DSD_TEST_BACKEND=memory)")
	}
	te = newTestEngine(t)
	a := te.mustCreate("a", "text/plain", "a").Info.ID
	te.mustCreate("b", "text/plain", "b")
	conflict = new(atomic.Bool)
	conflict.Store(true)
	te.mem.SetFault(func(what string, c *storage.Change) error {
		if what == "commit" && c.SID == a && conflict.Load() {
			return storage.ErrConflict
		}
		return nil
	})
	return te, conflict
}

// A commit that fails for one stream alone (a backend's conflict or unknown outcome)
// fails that stream's writes until it is reloaded from the store; other streams commit
// meanwhile, and the engine as a whole never enters the failed state. Spec: D4
// (amended), design/distributed.md §4.4.
func TestConflictBreaksOneStream(t *testing.T) {
	te, conflict := newConflictEngine(t)
	if _, err := te.Append(key("a"), AppendRequest{MediaType: "text/plain", Body: []byte("X")}); !errors.Is(err, model.ErrStorageFailed) {
		t.Fatalf("append to the conflicting stream: %v", err)
	}
	te.mustAppend("b", "text/plain", "b")
	if te.checkWritable() != nil {
		t.Fatal("a per-stream failure put the whole engine in the failed state")
	}
	conflict.Store(false)
	if res := te.mustAppend("a", "text/plain", "a"); res.Tail != 2 {
		t.Fatalf("tail %d after reload", res.Tail)
	}
	if got := string(te.readAll("a").Data); got != "aa" {
		t.Fatalf("reads %q", got)
	}
}

// Background clean-up that fails (a deleted stream's storage cannot be freed) never
// blocks client writes, is logged once while it keeps failing, and finishes once the
// store lets it. Spec: D4 (amended), issue 20 item 4.
func TestCleanupFailureDoesNotBlockWrites(t *testing.T) {
	if !onMemory() {
		t.Skip("needs the memory backend's clean-up faults (DSD_TEST_BACKEND=memory)")
	}
	logs := countLogs(t)
	te := newTestEngine(t)
	te.mustCreate("gone", "text/plain", "data")
	te.mustCreate("live", "text/plain", "")
	if err := te.Delete(key("gone")); err != nil {
		t.Fatal(err)
	}
	te.mem.SetFault(func(what string, _ *storage.Change) error {
		if what == "collect" {
			return errors.New("no space left on device")
		}
		return nil
	})
	for i := 0; i < 3; i++ {
		if te.collectTrash() {
			t.Fatal("clean-up reported success while failing")
		}
		te.mustAppend("live", "text/plain", "x")
	}
	if n := logs.count(slog.LevelError); n != 1 {
		t.Fatalf("%d error log lines for a failing clean-up: %q", n, logs.msgs)
	}
	te.mem.SetFault(nil)
	if !te.collectTrash() {
		t.Fatal("clean-up failed after the fault was removed")
	}
	if trash, _ := te.st.Trash(10); len(trash) != 0 {
		t.Fatalf("trash left: %v", trash)
	}
}

// A commit reported failed may still have landed (its sync failed after the write):
// recovery takes the committed state from the store, not from memory, so the stream's
// tail and producer state include it and nothing is written twice at one offset.
// Spec: D4 (amended), design/distributed.md §4.4 (in-doubt outcomes).
func TestRecoveryReadsTheStore(t *testing.T) {
	if !onMemory() {
		t.Skip("needs the memory backend's applied-then-failed fault (DSD_TEST_BACKEND=memory)")
	}
	te := newTestEngine(t)
	te.mustCreate("x", "text/plain", "ok")
	p := &model.Producer{ID: "w", Epoch: 0, Seq: 0}
	te.mem.SetFault(func(what string, _ *storage.Change) error {
		if what == "commit" {
			return fmt.Errorf("fsync: %w", memstore.ErrApplied)
		}
		return errors.New("still failing")
	})
	if _, err := te.Append(key("x"), AppendRequest{MediaType: "text/plain", Body: []byte("|landed"), Producer: p}); !errors.Is(err, model.ErrStorageFailed) {
		t.Fatalf("append: %v", err)
	}
	te.mem.SetFault(nil)
	res := untilWritable(t, te, "x", "|next")
	if res.Tail != model.Offset(len("ok|landed|next")) {
		t.Fatalf("tail %d: recovery did not take the landed write from the store", res.Tail)
	}
	if got := string(te.readAll("x").Data); got != "ok|landed|next" {
		t.Fatalf("reads %q", got)
	}
	dup, err := te.Append(key("x"), AppendRequest{MediaType: "text/plain", Body: []byte("|landed"), Producer: p})
	if err != nil || dup.Outcome != Duplicate {
		t.Fatalf("retry of the landed producer append: %+v %v", dup, err)
	}
}

// A commit group in which one stream's change fails alone fails only that change's op:
// another stream's op committed in the same group stays durable for the answers that wait
// for it. Here a close committed beside a conflict: later appends to the closed stream
// are refused as closed (409), not as a storage failure (503), though nothing is ever
// queued for that stream again. Spec: D4 (amended), B-5.2-07.
func TestConflictFailsOnlyItsOpOfAGroup(t *testing.T) {
	te, _ := newConflictEngine(t)
	te.mustCreate("x", "text/plain", "")
	held, release := holdPublication(te)
	first := make(chan error, 1)
	go func() {
		_, err := te.Append(key("x"), AppendRequest{MediaType: "text/plain", Body: []byte("x")})
		first <- err
	}()
	<-held // a group is busy: the next two ops queue into one group behind it
	errs := make(chan error, 2)
	go func() {
		_, err := te.Append(key("a"), AppendRequest{MediaType: "text/plain", Body: []byte("a")})
		errs <- err
	}()
	go func() {
		_, err := te.Append(key("b"), AppendRequest{MediaType: "text/plain", Body: []byte("b"), Close: true})
		errs <- err
	}()
	for deadline := time.Now().Add(10 * time.Second); te.queuedOps() < 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the appends did not queue")
		}
	}
	release()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	failed := 0
	for range 2 {
		if err := <-errs; errors.Is(err, model.ErrStorageFailed) {
			failed++
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if failed != 1 {
		t.Fatalf("%d of the group's two appends failed; want the conflicting one", failed)
	}
	for range 2 {
		_, err := te.Append(key("b"), AppendRequest{MediaType: "text/plain", Body: []byte("c")})
		if ce := (*model.ClosedError)(nil); !errors.As(err, &ce) {
			t.Fatalf("append to the stream closed in the group: %v; want it refused as closed", err)
		}
	}
}
