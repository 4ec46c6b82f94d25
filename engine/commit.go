package engine

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/dsd-project/dsd/engine/storage"
	"github.com/dsd-project/dsd/model"
)

// commitLoop is the committer goroutine: it commits the groups that no op's own goroutine
// commits (awaitOwn), one at a time (the queue's busy group), until the queue is closed and
// drained.
func (e *Engine) commitLoop() {
	defer e.bg.Done()
	for {
		batch, ok := e.q.take()
		if !ok {
			return
		}
		e.commitTaken(batch)
		e.q.release(batch, false)
	}
}

// commitTaken commits a taken group: one backend commit (the data file: one transaction,
// one fsync), then publication to readers and waiters (D4: never from inside the commit).
func (e *Engine) commitTaken(batch []*op) {
	e.commitMu.Lock()
	e.process(batch)
	e.commitMu.Unlock()
}

// process commits one group of ops, publishes the committed ones and settles them all.
// Ops of an earlier generation (decided before a recovery) and ops of streams whose
// earlier commit failed fail without being committed: their decided state is gone.
// e.commitMu is held.
func (e *Engine) process(batch []*op) {
	errs := make([]error, len(batch))
	e.group, e.groupIdx = e.group[:0], e.groupIdx[:0]
	gen := e.q.generation()
	for i, o := range batch {
		if o.gen != gen || o.onBroken() {
			errs[i] = model.ErrStorageFailed
			continue
		}
		e.group = append(e.group, o.ch)
		e.groupIdx = append(e.groupIdx, i)
	}
	if len(e.group) > 0 {
		ok := true
		for j, err := range e.commitGroup(e.group) {
			errs[e.groupIdx[j]] = err
			ok = ok && err == nil
		}
		if ok {
			e.committedAgain()
		}
	}
	clear(e.group)
	failed := false
	for _, err := range errs {
		failed = failed || err != nil
	}
	if hook := e.pubHook.Load(); hook != nil && !failed {
		(*hook)()
	}
	obs := e.observer.Load()
	for i, o := range batch {
		switch err := errs[i]; {
		case err == nil:
			o.publish()
			if obs != nil && o.s != nil {
				notifyStream(*obs, o.s.key)
			}
		case storage.PerStream(err):
			e.breakStreams(o, err)
			o.err = err
		default:
			o.err = err
		}
		o.done.Done()
	}
	e.settleGroup(batch, errs)
	if len(e.brokenSet) > 0 {
		e.repairBroken()
	}
}

// settleGroup settles the ops of a processed group, as lost only those that failed
// (errs): a change that failed for its stream alone fails its op, not its group, so
// that answers waiting for the others' lsns (a stream's last op) do not fail with it.
func (e *Engine) settleGroup(batch []*op, errs []error) {
	for i := 0; i < len(batch); {
		j := i + 1
		for j < len(batch) && (errs[j] != nil) == (errs[i] != nil) {
			j++
		}
		e.q.settle(batch[i].lsn, batch[j-1].lsn, errs[i] != nil)
		i = j
	}
}

// onBroken reports whether o changes a stream whose earlier commit failed alone.
func (o *op) onBroken() bool {
	if o.s != nil && o.s.broken.Load() != nil {
		return true
	}
	for _, s := range o.others {
		if s.broken.Load() != nil {
			return true
		}
	}
	return false
}

// commitGroup commits group unless the store has failed, and returns one result per
// change. A failure of the store (not of one stream) puts the engine in the failed state
// until a probe commit succeeds (D4).
func (e *Engine) commitGroup(group []storage.Change) []error {
	if p := e.failed.Load(); p != nil {
		errs := make([]error, len(group))
		for i := range errs {
			errs[i] = *p
		}
		return errs
	}
	start := time.Now()
	errs := e.st.Commit(group)
	var failure error // of the store, not of one stream
	for _, err := range errs {
		if err != nil && !storage.PerStream(err) {
			failure = err
			break
		}
	}
	if obs := e.opts.Observer; obs != nil {
		obs.Committed(len(group), time.Since(start), failure)
	}
	if failure != nil {
		e.storeFailed(failure)
	}
	return errs
}

// submit queues o and waits until it is durable. Errors: model.ErrStorageFailed,
// model.ErrShuttingDown.
func (e *Engine) submit(o *op) error {
	if err := e.q.pushOwn(o); err != nil {
		return err
	}
	return e.awaitOwn(o)
}

// awaitOwn is await for an op queued with pushOwn: when no group is being committed, the
// caller commits the queued ops (o's group) itself, in queue order like the committer
// goroutine, instead of waking it and being woken back. It first yields once, so that the
// goroutines ready to run queue their ops into this group (they wait for it, as the group
// is busy): without fsync, groups would otherwise be of one op, each paying a whole
// commit. Errors: those of await.
func (e *Engine) awaitOwn(o *op) error {
	if batch, ok := e.q.takeOwn(o); ok {
		e.commitOwn(batch)
	}
	return e.await(o)
}

// commitOwn commits the busy group batch taken by takeOwn, with the ops queued meanwhile.
func (e *Engine) commitOwn(batch []*op) {
	defer failStop()
	runtime.Gosched()
	batch = e.q.takeMore(batch)
	e.commitTaken(batch)
	e.q.release(batch, true)
}

// failStop ends the process on a panic while a request's goroutine commits, as a panic
// on the committer goroutine does: net/http would recover it and leave the group busy
// and commitMu held, every later write waiting forever.
func failStop() {
	if r := recover(); r != nil {
		fmt.Fprintf(os.Stderr, "panic: %v [committing on a request's goroutine]\n\n%s", r, debug.Stack())
		os.Exit(2)
	}
}

// await waits for a queued op. A failed op is model.ErrStorageFailed: clients are not
// told the cause, which is logged (D4).
func (e *Engine) await(o *op) error {
	o.done.Wait()
	if o.err != nil {
		return model.ErrStorageFailed
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

// waitDurable waits until every op numbered up to lsn has settled. Responses that
// reflect decided-but-queued state (a deduplicated retry, an idempotent re-create) wait
// here, so nothing is acknowledged before it is durable: when op lsn failed, the answer
// is model.ErrStorageFailed.
func (e *Engine) waitDurable(lsn uint64) error {
	q := &e.q
	for {
		q.mu.Lock()
		settled, lost := q.settled >= lsn, q.lostAt(lsn)
		if q.settledCh == nil && !settled {
			q.settledCh = make(chan struct{})
		}
		ch := q.settledCh
		q.mu.Unlock()
		switch {
		case settled && lost:
			return model.ErrStorageFailed
		case settled:
			return nil
		}
		<-ch
	}
}
