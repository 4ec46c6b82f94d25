package engine

import (
	"sync"

	"github.com/dsd-project/dsd/engine/storage"
	"github.com/dsd-project/dsd/model"
)

// op is one decided change waiting for the committer. Its change must not fail for
// logical reasons: every check happened before it was queued. After the commit, pub (if
// any) runs, then done is closed.
type op struct {
	s    *stream        // the stream it changes, or nil
	ch   storage.Change // what the backend commits (ch.Meta: s's meta once durable)
	pub  func()
	lsn  uint64
	done chan struct{}
	err  error
}

// metaChange is a further stream whose meta an op changes (fork reference counts).
type metaChange struct {
	s     *stream
	after *streamMeta
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

// commitLoop is the single committer: one backend commit (the data file: one transaction,
// one fsync) per group of queued ops, then publication to readers and waiters (D4: never
// from inside the commit).
func (e *Engine) commitLoop() {
	defer e.bg.Done()
	var buf []*op
	var group []storage.Change
	for {
		batch, ok := e.q.take(buf)
		if !ok {
			return
		}
		group = group[:0]
		for _, o := range batch {
			group = append(group, o.ch)
		}
		errs := e.commitGroup(group)
		if hook := e.pubHook.Load(); hook != nil && errs[0] == nil {
			(*hook)()
		}
		for i, o := range batch {
			if errs[i] == nil && o.pub != nil {
				o.pub()
			}
			o.err = errs[i]
			close(o.done)
		}
		if errs[len(errs)-1] == nil {
			e.q.markDurable(batch[len(batch)-1].lsn)
		} else {
			e.q.markDurable(0)
		}
		clear(batch)
		buf = batch[:0]
		clear(group)
	}
}

// commitGroup commits group unless storage has failed, and returns one result per
// change; a store failure becomes sticky.
func (e *Engine) commitGroup(group []storage.Change) []error {
	errs := make([]error, len(group))
	var err error
	if p := e.failed.Load(); p != nil {
		err = *p
	} else if hook := e.commitHook.Load(); hook != nil {
		err = (*hook)()
	}
	if err == nil {
		errs = e.st.Commit(group)
		for _, err := range errs {
			if err != nil {
				e.fail(err)
				break
			}
		}
		return errs
	}
	e.fail(err)
	for i := range errs {
		errs[i] = err
	}
	return errs
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
