package engine

import (
	"log/slog"
	"time"

	"github.com/dsd-project/dsd/engine/storage"
)

// gcBatchKeys bounds the keys one garbage-collection op deletes, so freeing a large
// stream never holds up a commit group for long.
const gcBatchKeys = 8192

// metaScanEvery is how many sweeps pass between scans of stored metas for expired
// streams that are not loaded.
const metaScanEvery = 60

// sweepLoop expires streams and frees the storage of deleted incarnations, in the
// background.
func (e *Engine) sweepLoop() {
	defer e.bg.Done()
	t := time.NewTicker(e.opts.SweepInterval)
	defer t.Stop()
	for n := 0; ; n++ {
		select {
		case <-e.stop:
			return
		case <-t.C:
		}
		if e.checkWritable() != nil {
			continue
		}
		e.expireLoaded()
		if e.expiry.complete() {
			e.expireIndexed()
		} else if n%metaScanEvery == 0 {
			e.expireStored()
		}
		collected := e.collectTrash()
		if trimmed := e.trimRetained(); collected && trimmed {
			e.gcWorked()
		}
		e.dropIdleCaches(cacheIdle)
		e.evictIdle()
	}
}

// cacheIdle is how long a stream's tail cache outlives its last use without live readers.
const cacheIdle = 10 * time.Second

// dropIdleCaches empties the tail caches of streams that nobody reads live and that saw
// no use for idle, so the cache's memory follows the set of active streams.
func (e *Engine) dropIdleCaches(idle time.Duration) {
	cutoff := time.Now().Add(-idle).UnixMilli()
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, s := range e.byID {
		s.mu.Lock()
		if len(s.cache.msgs) > 0 && s.live.Load() == 0 && s.pins.Load() == 0 && s.cacheUsed < cutoff {
			s.cache.reset(s.cache.end)
		}
		s.mu.Unlock()
	}
}

// expireLoaded deletes loaded streams whose lifetime has ended. With no stream of a
// lifetime stored (mayHaveLifetimes) none can end, and the pass, which holds e.mu over
// every loaded stream (up to --max-loaded-streams), is skipped.
func (e *Engine) expireLoaded() {
	if !e.mayHaveLifetimes() {
		return
	}
	now := e.now()
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, s := range e.streams {
		s.mu.Lock()
		if !s.deleted && s.vis != nil && !s.m.SoftDeleted && s.live.Load() == 0 &&
			s.m.expired(now, s.access.Load()) {
			_ = e.expireLocked(s)
		}
		s.mu.Unlock()
	}
}

// expireStored loads and expires streams that are stored but not loaded, scanning every
// stored stream, and builds the expiry index from the scan: later sweeps use the index.
func (e *Engine) expireStored() {
	gen := e.lifetimes.Load()
	if !e.mayHaveLifetimes() {
		e.expiry.markBuilt() // none stored: every later one is indexed as it is created
		return
	}
	now := e.now()
	var keys []string
	var found []indexedMeta
	some := false
	err := e.st.Names("", "", func(name string, sm *storage.Meta) bool {
		m := fromStored(sm)
		some = some || m.TTL != nil || m.ExpiresMs != nil
		if (m.TTL == nil && m.ExpiresMs == nil) || m.SoftDeleted {
			return true
		}
		// The stored access time is a lower bound of the one in memory: a bound for the index.
		access := max(m.AccessMs, e.startedMs)
		found = append(found, indexedMeta{m.Bucket, expiryEntry{m.dueMs(access), m.ID, name}})
		if m.expired(now, access) {
			keys = append(keys, name)
		}
		return true
	})
	if err != nil {
		e.gcFailed("scan for expired streams", err)
		return
	}
	if !some {
		e.noLifetimes.Store(gen) // none stored, unless created since the scan began
	}
	for _, f := range found {
		e.expiry.add(f.bucket, f.en)
	}
	e.expiry.markBuilt()
	for _, k := range keys {
		if s, err := e.lookup(k); err == nil && s != nil {
			e.mu.Lock()
			s.mu.Lock()
			if !s.evicted && !s.deleted && !s.m.SoftDeleted && s.live.Load() == 0 && s.m.expired(e.now(), s.access.Load()) {
				_ = e.expireLocked(s)
			}
			s.mu.Unlock()
			e.mu.Unlock()
		}
	}
}

// indexedMeta is an expiry index entry found by a scan, with its bucket.
type indexedMeta struct {
	bucket string
	en     expiryEntry
}

// mayHaveLifetimes reports whether a stream with a TTL or an expiry may be stored: false
// once a scan found none and none was created since, so that expiry passes over every
// stored stream (each minute, and a bucket's on GET) cost nothing when no stream can
// expire.
func (e *Engine) mayHaveLifetimes() bool {
	return e.lifetimes.Load() != e.noLifetimes.Load()
}

// collectTrash frees, a bounded batch at a time, the storage of deleted incarnations.
// It is background work: a failure is logged and retried at the next sweep, and never
// blocks client writes (D4).
// It reports whether it met no failure.
func (e *Engine) collectTrash() bool {
	sids, err := e.st.Trash(16)
	if err != nil {
		e.gcFailed("list deleted streams", err)
		return false
	}
	for _, sid := range sids {
		finished, err := e.st.Collect(sid, gcBatchKeys)
		if err != nil {
			e.gcFailed("free a deleted stream", err)
			return false
		}
		if !finished {
			break
		}
	}
	return true
}

// gcFailed logs a failure of background clean-up once until it works again; it is
// retried at the next sweep (D4).
func (e *Engine) gcFailed(what string, err error) {
	if e.gcFailing.CompareAndSwap(false, true) {
		slog.Error("engine: background clean-up failed; retrying at every sweep", "task", what,
			"store", e.st.Path(), "cause", err)
	}
}

// gcWorked logs that background clean-up works again after a failure.
func (e *Engine) gcWorked() {
	if e.gcFailing.CompareAndSwap(true, false) {
		slog.Info("engine: background clean-up works again", "store", e.st.Path())
	}
}

// flushMetas writes, at shutdown, the meta of every loaded stream whose stored one lags
// the decided one in a field that loading does not derive: the last write time
// (metaRefresh) and a sliding TTL's access time (reads keep it in memory only, A-14).
// It queues one op per such stream under the locks, then waits for them all.
func (e *Engine) flushMetas() {
	e.mu.Lock()
	var last uint64
	for _, s := range e.byID {
		s.mu.Lock()
		last = max(last, e.flushMetaLocked(s, true))
		s.mu.Unlock()
	}
	e.mu.Unlock()
	if last > 0 {
		_ = e.waitDurable(last) // a failed commit leaves the stored meta as it was
	}
}

// flushMetaLocked queues a rewrite of the stored meta of s when it lags (metaLags; with
// access, also when a sliding TTL's access time is newer) and returns the op's lsn, 0
// when none was queued. Without access the decided meta is stored as it is, so that a
// stream whose committed state is its decided one stays so (evictLocked). s.mu is held.
func (e *Engine) flushMetaLocked(s *stream, access bool) uint64 {
	touched := access && s.m.TTL != nil && s.access.Load() > s.m.AccessMs
	if s.deleted || (!touched && !s.metaLags()) {
		return 0
	}
	nm := s.m
	if touched {
		nm = s.edit()
		nm.AccessMs = s.access.Load()
	}
	o := &op{s: s, ch: storage.Change{SID: s.sid, Meta: nm.stored()}}
	if nm != s.m {
		o.after = nm
	}
	if e.q.push(o) != nil {
		return 0
	}
	s.m, s.lastLSN, s.stored = nm, o.lsn, nm
	return o.lsn
}
