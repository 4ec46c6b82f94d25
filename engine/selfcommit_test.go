package engine

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/dsd-project/dsd/model"
)

// isSettled reports whether waitDurable(lsn) would answer now.
func (q *commitQueue) isSettled(lsn uint64) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.settled >= lsn
}

// isBusy reports whether a group is being committed.
func (q *commitQueue) isBusy() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.busy
}

// An op that recovery drained before its goroutine came to awaitOwn fails as drained ops
// do; its goroutine commits nothing (and does not panic on the emptied queue). The
// committer goroutine, woken by a wake-up left from earlier work, may commit the op before
// the drain (then nil is right): the test tries until one op was drained.
func TestAwaitOwnAfterRecoveryDrainedTheOp(t *testing.T) {
	te := newTestEngine(t)
	for attempt := 1; attempt <= 50; attempt++ {
		o := &op{}
		if err := te.q.pushOwn(o); err != nil {
			t.Fatal(err)
		}
		if err := te.recoverStore(); err != nil {
			t.Fatal(err)
		}
		switch err := te.awaitOwn(o); {
		case errors.Is(err, model.ErrStorageFailed):
			return
		case err != nil:
			t.Fatalf("awaitOwn of a drained op = %v; want ErrStorageFailed", err)
		}
		t.Logf("attempt %d: the committer goroutine committed the op before the drain", attempt)
	}
	t.Fatal("in 50 attempts the committer goroutine always committed the op before the drain")
}

// Recovery drains the ops queued behind a busy group (taken, not yet committed: its
// goroutine yields or waits for commitMu) and fails them first; settled must not pass the
// busy group meanwhile, and once the group fails, waitDurable reports each of its ops
// lost (a deduplicated retry of one must not be acknowledged).
func TestRecoveryBehindABusyGroupKeepsSettledExact(t *testing.T) {
	te := newTestEngine(t)
	q := &te.q
	older, newer, group := takeOwnWhenIdle(t, te)
	if err := q.pushOwn(newer); err != nil {
		t.Fatal(err)
	}
	if err := te.recoverStore(); err != nil {
		t.Fatal(err)
	}
	if q.isSettled(older.lsn) {
		t.Errorf("settled passed lsn %d, which a busy group still holds", older.lsn)
	}
	te.commitTaken(group)
	q.release(group, true)
	for _, o := range []*op{older, newer} {
		if err := te.waitDurable(o.lsn); !errors.Is(err, model.ErrStorageFailed) {
			t.Fatalf("waitDurable(%d) = %v for a failed op; want ErrStorageFailed", o.lsn, err)
		}
	}
}

// takeOwnWhenIdle pushes an op and takes it as its own group once the queue is idle (the
// bucket's create may still be committing, and the committer goroutine, woken by a
// wake-up left from earlier work, may take the op first: then it tries again), and
// returns it with a fresh op for the test to push.
func takeOwnWhenIdle(t *testing.T, te *testEngine) (older, newer *op, group []*op) {
	t.Helper()
	for attempt := 1; attempt <= 50; attempt++ {
		for te.q.isBusy() {
			runtime.Gosched()
		}
		older = &op{}
		if err := te.q.pushOwn(older); err != nil {
			t.Fatal(err)
		}
		if group, ok := te.q.takeOwn(older); ok {
			return older, &op{}, group
		}
		if err := te.waitDurable(older.lsn); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("in 50 attempts the committer goroutine always took the op first")
	return nil, nil, nil
}

// A panic while a request's goroutine commits its group ends the process, as one on the
// committer goroutine does: net/http recovers a handler's panic, which would leave the
// group busy and commitMu held, and every later write waiting forever. The child process
// recovers the panic as net/http does; it must not get past it.
func TestPanicWhileCommittingOwnGroupEndsTheProcess(t *testing.T) {
	if os.Getenv("DSD_TEST_OWN_COMMIT_PANIC") == "1" {
		te := newTestEngine(t)
		te.mustCreate("x", "text/plain", "")
		for te.q.isBusy() { // the create's group: the append must find the queue idle
			runtime.Gosched()
		}
		hook := func() { panic("observer failed") }
		te.pubHook.Store(&hook)
		func() {
			defer func() { _ = recover() }()
			_, _ = te.Append(key("x"), AppendRequest{MediaType: "text/plain", Body: []byte("a")})
		}()
		fmt.Println("past the panic")
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestPanicWhileCommittingOwnGroupEndsTheProcess$")
	cmd.Env = append(os.Environ(), "DSD_TEST_OWN_COMMIT_PANIC=1")
	out, err := cmd.CombinedOutput()
	if err == nil || strings.Contains(string(out), "past the panic") || !strings.Contains(string(out), "observer failed") {
		t.Fatalf("child: %v\n%s\nwant it ended by the panic", err, out)
	}
}
