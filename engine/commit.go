package engine

import (
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/dsd-project/dsd/model"
)

// op is one decided change waiting for the committer. Its write runs inside the commit
// group's transaction and must not fail for logical reasons: every check happened before
// it was queued. After the commit, pub (if any) runs, then done is closed.
type op struct {
	s     *stream     // the stream it changes, or nil
	after *streamMeta // s's meta once this op is durable; nil leaves it unwritten
	drop  bool        // the op removes s's meta: pending meta writes for s are dropped
	also  []metaChange
	write func(tx *bolt.Tx) error
	pub   func()
	lsn   uint64
	done  chan struct{}
	err   error
}

// metaChange is a further stream whose meta an op changes (fork reference counts).
type metaChange struct {
	s     *stream
	after *streamMeta
	drop  bool
}

// commitQueue hands ops to the committer in the order they were decided. lsn numbers ops;
// durable is the highest lsn whose transaction has committed.
type commitQueue struct {
	mu        sync.Mutex
	ops       []*op
	lsn       uint64
	closed    bool
	wake      chan struct{}
	durable   uint64
	durableCh chan struct{}
}

func (q *commitQueue) init() {
	q.wake = make(chan struct{}, 1)
	q.durableCh = make(chan struct{})
}

// push queues o and numbers it. It fails once the queue is closed.
func (q *commitQueue) push(o *op) error {
	o.done = make(chan struct{})
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return model.ErrShuttingDown
	}
	q.lsn++
	o.lsn = q.lsn
	q.ops = append(q.ops, o)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return nil
}

// take blocks until ops are queued and returns all of them; ok is false once the queue
// is closed and drained.
func (q *commitQueue) take(buf []*op) (ops []*op, ok bool) {
	for {
		q.mu.Lock()
		if len(q.ops) > 0 {
			ops = append(buf[:0], q.ops...)
			clear(q.ops)
			q.ops = q.ops[:0]
			q.mu.Unlock()
			return ops, true
		}
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return nil, false
		}
		<-q.wake
	}
}

func (q *commitQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// markDurable records that every op up to lsn is committed and wakes waitDurable callers.
func (q *commitQueue) markDurable(lsn uint64) {
	q.mu.Lock()
	if lsn > q.durable {
		q.durable = lsn
	}
	ch := q.durableCh
	q.durableCh = make(chan struct{})
	q.mu.Unlock()
	close(ch)
}

// commitLoop is the single committer: one bbolt transaction (one fsync) per group of
// queued ops, then publication to readers and waiters (D4: never from inside the
// transaction).
func (e *Engine) commitLoop() {
	defer e.bg.Done()
	var buf []*op
	dirty := make(map[*stream]*streamMeta)
	for {
		batch, ok := e.q.take(buf)
		if !ok {
			return
		}
		var err error
		if p := e.failed.Load(); p != nil {
			err = *p
		} else {
			start := time.Now()
			err = e.db.Update(func(tx *bolt.Tx) error {
				if hook := e.commitHook.Load(); hook != nil {
					if err := (*hook)(); err != nil {
						return err
					}
				}
				return applyBatch(tx, batch, dirty)
			})
			if obs := e.opts.Observer; obs != nil {
				obs.Committed(len(batch), time.Since(start), err)
			}
			if err != nil {
				e.fail(err)
			}
		}
		if hook := e.pubHook.Load(); hook != nil && err == nil {
			(*hook)()
		}
		for _, o := range batch {
			if err == nil && o.pub != nil {
				o.pub()
			}
			if err != nil {
				o.err = err
			}
			close(o.done)
		}
		if err == nil {
			e.q.markDurable(batch[len(batch)-1].lsn)
		} else {
			e.q.markDurable(0)
		}
		clear(batch)
		buf = batch[:0]
	}
}

func applyBatch(tx *bolt.Tx, batch []*op, dirty map[*stream]*streamMeta) error {
	clear(dirty)
	for _, o := range batch {
		if o.write != nil {
			if err := o.write(tx); err != nil {
				return err
			}
		}
		markDirty(dirty, o.s, o.after, o.drop)
		for _, c := range o.also {
			markDirty(dirty, c.s, c.after, c.drop)
		}
	}
	metaB := tx.Bucket(bktMeta)
	for _, m := range dirty {
		if err := metaB.Put(sidKey(m.ID), encodeMeta(m)); err != nil {
			return err
		}
	}
	return nil
}

func markDirty(dirty map[*stream]*streamMeta, s *stream, after *streamMeta, drop bool) {
	switch {
	case drop:
		delete(dirty, s)
	case after != nil:
		dirty[s] = after
	}
}

// fail makes a storage failure sticky (D4).
func (e *Engine) fail(err error) {
	e.failed.CompareAndSwap(nil, &err)
}

// submit queues o and waits until it is durable. Errors: model.ErrStorageFailed,
// model.ErrShuttingDown.
func (e *Engine) submit(o *op) error {
	if err := e.q.push(o); err != nil {
		return err
	}
	return e.await(o)
}

// await waits for a queued op.
func (e *Engine) await(o *op) error {
	<-o.done
	if o.err != nil {
		return e.checkWritable()
	}
	return nil
}

// refuse returns a refusal decided from a stream's decided state once that state is
// durable (lsn: the stream's last queued op at decision time). A refusal must not reflect
// a write that could still fail or that readers cannot see yet (linearizability, D4).
func (e *Engine) refuse(lsn uint64, err error) error {
	if werr := e.waitDurable(lsn); werr != nil {
		return werr
	}
	return err
}

// waitDurable waits until every op numbered up to lsn has committed. Responses that
// reflect decided-but-queued state (a deduplicated retry, an idempotent re-create) wait
// here, so nothing is acknowledged before it is durable.
func (e *Engine) waitDurable(lsn uint64) error {
	for {
		e.q.mu.Lock()
		d, ch := e.q.durable, e.q.durableCh
		e.q.mu.Unlock()
		if d >= lsn {
			return nil
		}
		if err := e.checkWritable(); err != nil && e.failed.Load() != nil {
			return err
		}
		<-ch
	}
}
