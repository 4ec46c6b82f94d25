package engine

import (
	"cmp"
	"slices"
	"sync/atomic"

	"github.com/dsd-project/dsd/model"
)

// evictBatch bounds the streams evicted under one hold of e.mu, so that lookups of loaded
// streams wait for at most one batch.
const evictBatch = 1024

// evictLowWater is the share of Options.LoadedStreams an eviction pass brings the loaded
// count down to, so that a steady trickle of new streams does not evict at every sweep.
const evictLowWater = 0.9

// evictIdle unloads the least recently used idle streams while more than
// Options.LoadedStreams incarnations are loaded. An evicted stream's state is all in
// storage (every op settled, its meta current: a lagging one is written first and waited
// for, outside e.mu), so the next lookup reloads it exactly; its in-memory extras (tail
// cache, producer states) are caches that reload on demand.
// It returns how many streams it evicted.
func (e *Engine) evictIdle() int {
	limit := e.opts.LoadedStreams
	if limit < 0 {
		return 0
	}
	e.mu.RLock()
	n := len(e.byID)
	if n <= limit {
		e.mu.RUnlock()
		return 0
	}
	type cand struct {
		s    *stream
		used int64
	}
	cands := make([]cand, 0, n)
	for _, s := range e.byID {
		cands = append(cands, cand{s, s.access.Load()})
	}
	e.mu.RUnlock()
	slices.SortFunc(cands, func(a, b cand) int { return cmp.Compare(a.used, b.used) })
	want := n - int(float64(limit)*evictLowWater)
	evicted := 0
	for i := 0; i < len(cands) && evicted < want; {
		settled := e.settledLSN()
		var lagging []*stream
		var last uint64
		e.mu.Lock()
		for end := min(i+evictBatch, len(cands)); i < end && evicted+len(lagging) < want; i++ {
			switch ok, lsn := e.evictLocked(cands[i].s, settled); {
			case ok:
				evicted++
			case lsn > 0:
				lagging, last = append(lagging, cands[i].s), lsn
			}
		}
		e.mu.Unlock()
		if last > 0 && e.waitDurable(last) == nil {
			evicted += e.evictFlushed(lagging)
		}
	}
	e.unloads.Add(uint64(evicted))
	return evicted
}

// evictFlushed evicts the streams whose lagging metas an eviction batch wrote, now that
// those writes settled, and returns how many it evicted; one that changed meanwhile
// stays loaded for a later pass.
func (e *Engine) evictFlushed(streams []*stream) int {
	settled := e.settledLSN()
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, s := range streams {
		if ok, _ := e.evictLocked(s, settled); ok {
			n++
		}
	}
	return n
}

// settledLSN returns the lsn up to which every queued op has settled.
func (e *Engine) settledLSN() uint64 {
	e.q.mu.Lock()
	defer e.q.mu.Unlock()
	return e.q.settled
}

// evictLocked unloads s when nothing depends on its in-memory state: no op in flight
// (settled covers its last one, and its decided state is the published one), no live
// reader, bootstrap, waiter or pending repair, and no deletion under way. A sliding TTL's
// access time (reads keep it in memory only, A-14) stays in e.accessed for the next load.
// When only its stored meta lags (metaLags: the last write time) it queues the meta's
// write instead and returns its lsn: s is evictable once that settled. e.mu is held.
func (e *Engine) evictLocked(s *stream, settled uint64) (bool, uint64) {
	if e.byID[s.sid] != s {
		return false, 0 // dropped meanwhile
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lastLSN > settled || s.m != s.vis || s.deleted || s.visDeleted || s.notify != nil ||
		s.live.Load() != 0 || s.pins.Load() != 0 || s.broken.Load() != nil {
		return false, 0
	}
	if _, ok := e.brokenSet[s]; ok {
		return false, 0
	}
	if s.metaLags() {
		return false, e.flushMetaLocked(s, false)
	}
	s.evicted = true
	if a := s.access.Load(); s.m.TTL != nil && a > e.startedMs {
		e.accessed[s.sid] = max(e.accessed[s.sid], a)
	}
	s.cache.reset(s.cache.end)
	s.producers = nil
	e.forgetLocked(s)
	return true, 0
}

// LoadStats is what the engine holds in memory, for the metrics.
type LoadStats struct {
	Streams int    // loaded stream incarnations
	Unloads uint64 // idle streams unloaded past Options.LoadedStreams since Open
}

// Loaded returns the loaded stream count and the unloads so far.
func (e *Engine) Loaded() LoadStats {
	e.mu.RLock()
	n := len(e.byID)
	e.mu.RUnlock()
	return LoadStats{Streams: n, Unloads: e.unloads.Load()}
}

// holdReadable is readable that also counts the reader in c(s) (live readers,
// bootstraps), retrying when the stream was evicted before the count was seen: a counted
// incarnation stays loaded until the count drops (evictLocked).
func (e *Engine) holdReadable(key model.StreamKey, touch bool, c func(*stream) *atomic.Int32) (*stream, *streamMeta, error) {
	for {
		s, v, err := e.readable(key, touch)
		if err != nil {
			return nil, nil, err
		}
		c(s).Add(1)
		s.mu.Lock()
		evicted := s.evicted
		s.mu.Unlock()
		if !evicted {
			return s, v, nil
		}
		c(s).Add(-1)
	}
}
