package engine

import (
	"log/slog"
	"time"

	"github.com/dsd-project/dsd/engine/storage"
)

// probeEvery is the period of probe commits while the store has failed (D4).
const probeEvery = 500 * time.Millisecond

// storeFailed enters the failed state (D4): writes are refused and queued ops fail until
// a probe commit succeeds. It logs the cause once. The committer calls it.
func (e *Engine) storeFailed(err error) {
	if !e.failed.CompareAndSwap(nil, &err) {
		return
	}
	if !e.failLogged {
		// A store that fails again right after a probe succeeded (a disk that is still
		// nearly full) stays one failure in the log until a client commit succeeds.
		e.failLogged, e.failedAt = true, time.Now()
		slog.Error("engine: storage failed; refusing writes until a probe commit succeeds",
			"store", e.st.Path(), "cause", err)
	}
	e.bg.Add(1)
	go e.probeLoop()
}

// committedAgain logs the recovery once a client commit succeeds after a failure. The
// committer calls it.
func (e *Engine) committedAgain() {
	if e.failLogged {
		e.failLogged = false
		slog.Info("engine: storage recovered; taking writes again", "store", e.st.Path(),
			"failed_for", time.Since(e.failedAt).Round(time.Millisecond).String())
	}
}

// probeLoop probes the store until a probe commit succeeds and recovery has re-read
// the loaded streams.
func (e *Engine) probeLoop() {
	defer e.bg.Done()
	t := time.NewTicker(probeEvery)
	defer t.Stop()
	for {
		select {
		case <-e.stop:
			return
		case <-t.C:
		}
		if e.st.Probe() == nil && e.recoverStore() == nil {
			return
		}
	}
}

// recoverStore leaves the failed state. With the committer, every decider and every
// stream held still, it fails what was decided before (queued ops of the old
// generation) and replaces every loaded stream's decided and committed state with the
// store's: a failed commit may still have landed (a sync that failed after the write), so
// the store, not memory, says what is committed. Buckets reload from the store too. A
// failed read leaves the engine failed; the next probe tries again.
func (e *Engine) recoverStore() error {
	e.commitMu.Lock()
	defer e.commitMu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	held := make([]*stream, 0, len(e.byID))
	for _, s := range e.byID {
		s.mu.Lock()
		held = append(held, s)
	}
	defer func() {
		for _, s := range held {
			s.mu.Unlock()
		}
	}()
	if ops := e.q.drain(); len(ops) > 0 {
		for _, o := range ops {
			o.err = storage.ErrUnknown // never attempted: reported as a storage failure
			o.done.Done()
		}
		e.q.settle(ops[0].lsn, ops[len(ops)-1].lsn, true)
	}
	clear(e.buckets)
	for _, s := range held {
		if s.visDeleted {
			continue
		}
		if err := e.reloadLocked(s); err != nil {
			return err
		}
		delete(e.brokenSet, s)
	}
	e.failed.Store(nil)
	return nil
}

// forgetLocked drops s from the engine's maps. e.mu is held.
func (e *Engine) forgetLocked(s *stream) {
	if e.streams[s.key] == s {
		delete(e.streams, s.key)
	}
	if e.byID[s.sid] == s {
		delete(e.byID, s.sid)
	}
}

// breakStreams marks the streams of op o, whose commit failed for them alone (a conflict
// or an unknown outcome), as broken: their writes are refused and their queued ops fail
// until repairBroken reloads them. The committer calls it.
func (e *Engine) breakStreams(o *op, err error) {
	for _, s := range append([]*stream{o.s}, o.others...) {
		if s == nil {
			e.mu.Lock()
			clear(e.buckets)
			e.mu.Unlock()
			continue
		}
		if s.broken.CompareAndSwap(nil, &err) {
			slog.Error("engine: a commit of one stream failed; reloading it from storage",
				"stream", s.key, "cause", err)
			e.brokenSet[s] = struct{}{}
		}
	}
}

// repairBroken reloads each broken stream whose queued ops have all settled from the
// store's committed state, and takes its writes again. A failed read leaves it broken
// until the next group. The committer calls it.
func (e *Engine) repairBroken() {
	e.q.mu.Lock()
	settled := e.q.settled
	e.q.mu.Unlock()
	for s := range e.brokenSet {
		e.mu.Lock()
		s.mu.Lock()
		if s.lastLSN <= settled {
			if err := e.reloadLocked(s); err == nil {
				delete(e.brokenSet, s)
				slog.Info("engine: stream reloaded; taking its writes again", "stream", s.key)
			}
		}
		s.mu.Unlock()
		e.mu.Unlock()
	}
}

// reloadLocked replaces s's decided and committed state with the store's and wakes its
// waiters; a stream the store no longer has is deleted. e.mu and s.mu are held.
func (e *Engine) reloadLocked(s *stream) error {
	sm, bound, err := e.st.Incarnation(s.sid)
	if err != nil {
		return err
	}
	m := fromStored(sm)
	if m == nil {
		s.deleted, s.visDeleted = true, true
		e.forgetLocked(s)
	} else {
		m.AccessMs = s.access.Load()
		s.m, s.vis, s.stored, s.deleted, s.lastLSN = m, m, m, false, 0
		if !bound && e.streams[s.key] == s {
			delete(e.streams, s.key)
		}
	}
	clear(s.producers)
	if s.vis != nil {
		s.cache.reset(s.vis.Tail)
	}
	s.broken.Store(nil)
	s.wakeLocked()
	return nil
}
