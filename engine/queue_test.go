package engine

import (
	"math/rand/v2"
	"testing"
)

// queued pushes n ops with pushOwn and returns them.
func queued(t *testing.T, q *commitQueue, n int) []*op {
	t.Helper()
	ops := make([]*op, n)
	for i := range ops {
		ops[i] = &op{}
		if err := q.pushOwn(ops[i]); err != nil {
			t.Fatal(err)
		}
	}
	return ops
}

// woken reports whether the committer goroutine has a wake-up pending, and consumes it.
func woken(q *commitQueue) bool {
	select {
	case <-q.wake:
		return true
	default:
		return false
	}
}

// One group at a time: an op's goroutine takes every queued op, in queue order, only when
// no group is busy and its op is not taken yet; releasing with ops queued wakes the
// committer goroutine, which then takes them.
func TestCommitQueueOneBusyGroup(t *testing.T) {
	var q commitQueue
	q.init()
	ops := queued(t, &q, 3)
	if woken(&q) {
		t.Fatal("pushOwn woke the committer goroutine")
	}
	group, ok := q.takeOwn(ops[1])
	if !ok || len(group) != 3 || group[0] != ops[0] || group[2] != ops[2] {
		t.Fatalf("takeOwn = %v, %v: want the 3 queued ops in order", group, ok)
	}
	later := queued(t, &q, 2)
	if _, ok := q.takeOwn(later[0]); ok {
		t.Fatal("takeOwn took a group while one is busy")
	}
	if _, ok := q.takeOwn(ops[0]); ok {
		t.Fatal("takeOwn took an op that is already taken")
	}
	q.release(group, true)
	if !woken(&q) {
		t.Fatal("release with ops queued did not wake the committer goroutine")
	}
	next, ok := q.take()
	if !ok || len(next) != 2 || next[0] != later[0] || next[1] != later[1] {
		t.Fatalf("take = %v, %v: want the 2 ops queued meanwhile", next, ok)
	}
	if _, ok := q.takeOwn(later[1]); ok {
		t.Fatal("takeOwn took an op the committer goroutine has taken")
	}
	q.release(next, false)
	if woken(&q) {
		t.Fatal("release without queued ops woke the committer goroutine")
	}
}

// takeMore adds the ops queued after the busy group was taken, but never ops of a newer
// generation (recovery drained the queue meanwhile): a group's ops share one generation.
func TestCommitQueueTakeMoreKeepsOneGeneration(t *testing.T) {
	var q commitQueue
	q.init()
	first := queued(t, &q, 1)
	group, ok := q.takeOwn(first[0])
	if !ok {
		t.Fatal("takeOwn refused an idle queue")
	}
	more := queued(t, &q, 2)
	group = q.takeMore(group)
	if len(group) != 3 || group[1] != more[0] || group[2] != more[1] {
		t.Fatalf("takeMore = %v: want the first op, then the 2 queued since", group)
	}
	if _, ok := q.takeOwn(more[1]); ok {
		t.Fatal("an op added by takeMore was taken again")
	}
	q.drain()
	newer := queued(t, &q, 1)
	if got := q.takeMore(group); len(got) != 3 {
		t.Fatalf("takeMore added %d ops of a newer generation", len(got)-3)
	}
	q.release(group, true)
	if !woken(&q) {
		t.Fatal("release with the newer op queued did not wake the committer goroutine")
	}
	if next, ok := q.take(); !ok || len(next) != 1 || next[0] != newer[0] {
		t.Fatalf("take = %v, %v: want the newer op", next, ok)
	}
}

// The committer goroutine stops only when the queue is closed, drained and no group is
// busy: a group an op's goroutine still commits keeps it (and so Close) waiting.
func TestCommitQueueCloseWaitsForTheBusyGroup(t *testing.T) {
	var q commitQueue
	q.init()
	ops := queued(t, &q, 1)
	group, ok := q.takeOwn(ops[0])
	if !ok {
		t.Fatal("takeOwn refused an idle queue")
	}
	q.close()
	if err := q.pushOwn(&op{}); err == nil {
		t.Fatal("pushOwn succeeded on a closed queue")
	}
	if ops, done := q.tryTake(); ops != nil || done {
		t.Fatalf("tryTake = %v, %v while a group is busy: want nothing yet, not done", ops, done)
	}
	q.release(group, true)
	if !woken(&q) {
		t.Fatal("release on a closed queue did not wake the committer goroutine")
	}
	if ops, ok := q.take(); ok || ops != nil {
		t.Fatalf("take = %v, %v: want the end of a closed, drained, idle queue", ops, ok)
	}
}

// An op that recovery drained (failed, settled) before its goroutine came to awaitOwn is
// not the goroutine's to commit: takeOwn takes nothing, from an empty queue or from one
// holding only newer ops (their own goroutines commit them).
func TestCommitQueueTakeOwnAfterDrain(t *testing.T) {
	var q commitQueue
	q.init()
	ops := queued(t, &q, 1)
	if drained := q.drain(); len(drained) != 1 {
		t.Fatalf("drain = %v: want the queued op", drained)
	}
	if group, ok := q.takeOwn(ops[0]); ok {
		t.Fatalf("takeOwn = %v, true for a drained op: want nothing taken", group)
	}
	if q.busy {
		t.Fatal("takeOwn left an empty group busy")
	}
	newer := queued(t, &q, 1)
	if group, ok := q.takeOwn(ops[0]); ok {
		t.Fatalf("takeOwn = %v, true for a drained op: want the newer op left to its own", group)
	}
	if group, ok := q.takeOwn(newer[0]); !ok || len(group) != 1 || group[0] != newer[0] {
		t.Fatalf("takeOwn = %v, %v: want the newer op", group, ok)
	}
}

// Ranges settled out of lsn order (recovery fails newer queued ops before an older busy
// group settles): settled stops at the gap until it is filled, and lost stays exact.
func TestCommitQueueSettleOutOfOrder(t *testing.T) {
	var q commitQueue
	q.init()
	q.settle(4, 5, true)
	q.settle(7, 7, false)
	if q.settled != 0 {
		t.Fatalf("settled = %d with lsns 1..3 and 6 unsettled; want 0", q.settled)
	}
	q.settle(1, 3, true)
	if q.settled != 5 {
		t.Fatalf("settled = %d; want 5 (6 still unsettled)", q.settled)
	}
	q.settle(6, 6, false)
	if q.settled != 7 {
		t.Fatalf("settled = %d; want 7", q.settled)
	}
	for lsn, want := range map[uint64]bool{1: true, 3: true, 4: true, 5: true, 6: false, 7: false} {
		if got := q.lostAt(lsn); got != want {
			t.Errorf("lostAt(%d) = %v; want %v (lost %v)", lsn, got, want, q.lost)
		}
	}
}

// lost keeps one range for each run of failed ops, merged when adjacent, and lostAt finds
// any lsn among many of them: a long run with failures between successes.
func TestCommitQueueLostRanges(t *testing.T) {
	var q commitQueue
	q.init()
	rng := rand.New(rand.NewPCG(1, 2))
	failed := map[uint64]bool{}
	runs := 0
	for lsn := uint64(1); lsn <= 20000; {
		n := 1 + rng.Uint64N(4)
		f := rng.IntN(3) == 0
		q.settle(lsn, lsn+n-1, f)
		for l := lsn; l < lsn+n; l++ {
			failed[l] = f
		}
		if f && !failed[lsn-1] {
			runs++
		}
		lsn += n
	}
	if len(q.lost) != runs {
		t.Fatalf("%d lost ranges for %d runs of failed ops", len(q.lost), runs)
	}
	for lsn := uint64(0); lsn <= 20001; lsn++ {
		if got := q.lostAt(lsn); got != failed[lsn] {
			t.Fatalf("lostAt(%d) = %v; want %v", lsn, got, failed[lsn])
		}
	}
}
