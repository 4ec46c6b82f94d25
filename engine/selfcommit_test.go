package engine

import (
	"errors"
	"testing"

	"github.com/dsd-project/dsd/model"
)

// isSettled reports whether waitDurable(lsn) would answer now.
func (q *commitQueue) isSettled(lsn uint64) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.settled >= lsn
}

// An op that recovery drained before its goroutine came to awaitOwn fails as drained ops
// do; its goroutine commits nothing (and does not panic on the emptied queue).
func TestAwaitOwnAfterRecoveryDrainedTheOp(t *testing.T) {
	te := newTestEngine(t)
	o := &op{}
	if err := te.q.pushOwn(o); err != nil {
		t.Fatal(err)
	}
	if err := te.recoverStore(); err != nil {
		t.Fatal(err)
	}
	if err := te.awaitOwn(o); !errors.Is(err, model.ErrStorageFailed) {
		t.Fatalf("awaitOwn of a drained op = %v; want ErrStorageFailed", err)
	}
}

// Recovery drains the ops queued behind a busy group (taken, not yet committed: its
// goroutine yields or waits for commitMu) and fails them first; settled must not pass the
// busy group meanwhile, and once the group fails, waitDurable reports each of its ops
// lost (a deduplicated retry of one must not be acknowledged).
func TestRecoveryBehindABusyGroupKeepsSettledExact(t *testing.T) {
	te := newTestEngine(t)
	q := &te.q
	older, newer := &op{}, &op{}
	if err := q.pushOwn(older); err != nil {
		t.Fatal(err)
	}
	group, ok := q.takeOwn(older)
	if !ok {
		t.Fatal("takeOwn refused an idle queue")
	}
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
