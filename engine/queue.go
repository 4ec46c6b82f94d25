package engine

import (
	"cmp"
	"slices"
	"sync"

	"github.com/dsd-project/dsd/engine/storage"
	"github.com/dsd-project/dsd/model"
)

// op is one decided change waiting for the committer. Its change must not fail for
// logical reasons: every check happened before it was queued. After the commit, pub (if
// any) runs, then done is closed.
type op struct {
	s      *stream        // the stream it changes, or nil
	others []*stream      // further streams whose decided meta it changes (ch.Also)
	ch     storage.Change // what the backend commits (ch.Meta: s's meta once durable)
	pub    func()
	// after and msgs, when pub is nil and after is not: s.publish(after, msgs) (appends,
	// the hot path, without a closure to allocate).
	after *streamMeta
	msgs  []cachedMsg
	one   [1]cachedMsg // msgs' storage for the usual single message (no slice allocated)
	lsn   uint64
	gen   uint64         // the queue's generation when queued (see commitQueue.drain)
	done  sync.WaitGroup // Done once the op is committed or failed (part of op: no allocation)
	err   error
}

// publish runs the op's publication after its commit.
func (o *op) publish() {
	switch {
	case o.pub != nil:
		o.pub()
	case o.after != nil:
		o.s.publish(o.after, o.msgs)
	}
}

// metaChange is a further stream whose meta an op changes (fork reference counts).
type metaChange struct {
	s     *stream
	after *streamMeta
}

// commitQueue hands ops, in the order they were decided, to one committer at a time: the
// committer goroutine, or the goroutine of a queued op that finds no group being committed
// and commits the queued ops itself (awaitOwn: no handoff to the committer and back when
// groups are small). lsn numbers ops; settled is the highest lsn up to which every op is
// committed or failed, lost the lsn ranges of the ops that failed.
type commitQueue struct {
	mu        sync.Mutex
	ops       []*op
	lsn       uint64
	gen       uint64
	closed    bool
	wake      chan struct{} // the committer goroutine: ops to take, or a group released
	busy      bool          // a group is taken and not yet settled: nobody else takes one
	buf       []*op         // the group's slice, owned by whoever set busy
	settled   uint64
	ahead     []lsnRange // ranges settled past a gap (settle: recovery with a busy group)
	lost      []lsnRange
	settledCh chan struct{} // closed by the next settle; nil while nobody waits (waitDurable)
}

// lsnRange is the lsns from..to, both included.
type lsnRange struct{ from, to uint64 }

func (q *commitQueue) init() {
	q.wake = make(chan struct{}, 1)
}

// push queues o, numbers it and wakes the committer goroutine. It fails once the queue is
// closed.
func (q *commitQueue) push(o *op) error {
	if err := q.pushOwn(o); err != nil {
		return err
	}
	q.signal()
	return nil
}

// pushOwn queues o and numbers it without waking the committer goroutine: the caller must
// then call Engine.awaitOwn(o), which commits o's group itself unless another committer
// has taken o or is busy (that one wakes the committer goroutine when it releases with
// ops queued). It fails once the queue is closed.
func (q *commitQueue) pushOwn(o *op) error {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return model.ErrShuttingDown
	}
	o.done.Add(1)
	q.lsn++
	o.lsn, o.gen = q.lsn, q.gen
	q.ops = append(q.ops, o)
	q.mu.Unlock()
	return nil
}

// signal wakes the committer goroutine (a buffered wake-up: never lost, never blocks).
func (q *commitQueue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// take blocks until ops are queued and no group is busy, and takes all of them as the
// busy group; ok is false once the queue is closed and drained and no group is busy.
// The caller settles the group, then calls release.
func (q *commitQueue) take() (ops []*op, ok bool) {
	for {
		ops, done := q.tryTake()
		switch {
		case ops != nil:
			return ops, true
		case done:
			return nil, false
		}
		<-q.wake
	}
}

// tryTake is take without blocking: ops is nil when there is nothing to take yet, done
// true once the queue is closed and drained and no group is busy.
func (q *commitQueue) tryTake() (ops []*op, done bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.busy && len(q.ops) > 0 {
		return q.takeLocked(), false
	}
	return nil, q.closed && !q.busy && len(q.ops) == 0
}

// takeOwn takes the queued ops as the busy group when o is among them and no group is
// busy; ok is false otherwise (o is, or will be, another committer's to settle, or
// recovery drained and failed it: see drain).
func (q *commitQueue) takeOwn(o *op) (ops []*op, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.busy || len(q.ops) == 0 || o.lsn < q.ops[0].lsn {
		return nil, false
	}
	return q.takeLocked(), true
}

// takeMore appends the ops queued since to the busy group ops, unless a recovery started a
// new generation since (a group's ops are of one generation, as take's are).
func (q *commitQueue) takeMore(ops []*op) []*op {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.ops) == 0 || q.gen != ops[0].gen {
		return ops
	}
	return q.moveQueued(ops)
}

// takeLocked moves the queued ops into the busy group. q.mu is held.
func (q *commitQueue) takeLocked() []*op {
	q.busy = true
	return q.moveQueued(q.buf[:0])
}

// moveQueued appends the queued ops to dst and empties the queue. q.mu is held.
func (q *commitQueue) moveQueued(dst []*op) []*op {
	dst = append(dst, q.ops...)
	clear(q.ops)
	q.ops = q.ops[:0]
	return dst
}

// release ends the busy group taken by take or takeOwn (settled by then) and, when ops
// are queued or the queue is closed, wakes the committer goroutine (unless it is the
// caller: wake false).
func (q *commitQueue) release(ops []*op, wake bool) {
	clear(ops)
	q.mu.Lock()
	q.buf, q.busy = ops[:0], false
	more := len(q.ops) > 0 || q.closed
	q.mu.Unlock()
	if wake && more {
		q.signal()
	}
}

// drain removes the queued ops and starts a new generation: ops taken earlier but not
// yet committed belong to the old one, and the committer fails them (recovery, D4).
func (q *commitQueue) drain() []*op {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.gen++
	return q.moveQueued(nil)
}

// generation returns the current generation.
func (q *commitQueue) generation() uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.gen
}

func (q *commitQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
}

// settle records that the ops from..to are settled, failed or not, and wakes
// waitDurable callers. Groups settle in lsn order, except that recovery fails the queued
// ops while an older group may still be busy (taken, not yet committed): settled then
// waits for that group (ahead), and lost stays in lsn order.
func (q *commitQueue) settle(from, to uint64, failed bool) {
	q.mu.Lock()
	if failed {
		q.addLost(from, to)
	}
	q.ahead = append(q.ahead, lsnRange{from, to})
	for i := 0; i < len(q.ahead); {
		if r := q.ahead[i]; r.from <= q.settled+1 {
			q.settled = max(q.settled, r.to)
			q.ahead = slices.Delete(q.ahead, i, i+1)
			i = 0
			continue
		}
		i++
	}
	ch := q.settledCh
	q.settledCh = nil
	q.mu.Unlock()
	if ch != nil {
		close(ch)
	}
}

// addLost records the ops from..to as failed, in lsn order, merged with adjacent ranges.
// q.mu is held.
func (q *commitQueue) addLost(from, to uint64) {
	i := len(q.lost)
	for i > 0 && q.lost[i-1].from > from {
		i--
	}
	q.lost = slices.Insert(q.lost, i, lsnRange{from, to})
	if i+1 < len(q.lost) && q.lost[i].to+1 >= q.lost[i+1].from {
		q.lost[i].to = max(q.lost[i].to, q.lost[i+1].to)
		q.lost = slices.Delete(q.lost, i+1, i+2)
	}
	if i > 0 && q.lost[i-1].to+1 >= q.lost[i].from {
		q.lost[i-1].to = max(q.lost[i-1].to, q.lost[i].to)
		q.lost = slices.Delete(q.lost, i, i+1)
	}
}

// lostAt reports whether op lsn failed, in time logarithmic in the lost ranges: they
// accumulate over a run, one for each run of failed ops, and an idle stream's last op
// can be old. q.mu is held.
func (q *commitQueue) lostAt(lsn uint64) bool {
	i, _ := slices.BinarySearchFunc(q.lost, lsn, func(r lsnRange, lsn uint64) int {
		return cmp.Compare(r.to, lsn)
	})
	return i < len(q.lost) && q.lost[i].from <= lsn
}
