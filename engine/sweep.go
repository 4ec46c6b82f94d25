package engine

import (
	"time"

	bolt "go.etcd.io/bbolt"
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
		if n%metaScanEvery == 0 {
			e.expireStored()
		}
		e.collectTrash()
		e.trimRetained()
		e.dropIdleCaches(cacheIdle)
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

// expireLoaded deletes loaded streams whose lifetime has ended.
func (e *Engine) expireLoaded() {
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

// expireStored loads and expires streams that are stored but not loaded.
func (e *Engine) expireStored() {
	now := e.now()
	var keys []string
	_ = e.db.View(func(tx *bolt.Tx) error {
		names, meta := tx.Bucket(bktNames), tx.Bucket(bktMeta)
		return names.ForEach(func(k, v []byte) error {
			mv := meta.Get(v)
			if mv == nil {
				return nil
			}
			m, err := decodeMeta(mv)
			if err == nil && (m.TTL != nil || m.ExpiresMs != nil) && !m.SoftDeleted &&
				m.expired(now, max(m.AccessMs, e.startedMs)) {
				keys = append(keys, string(k))
			}
			return nil
		})
	})
	for _, k := range keys {
		if s, err := e.lookup(k); err == nil && s != nil {
			e.mu.Lock()
			s.mu.Lock()
			if !s.deleted && !s.m.SoftDeleted && s.live.Load() == 0 && s.m.expired(e.now(), s.access.Load()) {
				_ = e.expireLocked(s)
			}
			s.mu.Unlock()
			e.mu.Unlock()
		}
	}
}

// collectTrash frees, a bounded batch at a time, the storage of deleted incarnations.
func (e *Engine) collectTrash() {
	for i := 0; i < 16; i++ {
		var sid uint64
		_ = e.db.View(func(tx *bolt.Tx) error {
			if k, _ := tx.Bucket(bktTrash).Cursor().First(); k != nil {
				sid = getU64(k)
			}
			return nil
		})
		if sid == 0 {
			return
		}
		finished := false
		o := &op{write: func(tx *bolt.Tx) error {
			var err error
			finished, err = freeSID(tx, sid, gcBatchKeys)
			return err
		}}
		if e.submit(o) != nil || !finished {
			return
		}
	}
}

// freeSID deletes up to limit keys of an incarnation; finished reports that nothing is
// left and the trash entry is gone.
func freeSID(tx *bolt.Tx, sid uint64, limit int) (finished bool, err error) {
	n := 0
	for _, name := range [][]byte{bktData, bktRecords, bktProds, bktRcpts, bktSnaps} {
		c := tx.Bucket(name).Cursor()
		prefix := sidKey(sid)
		for k, _ := c.Seek(prefix); k != nil && len(k) >= 8 && getU64(k) == sid; k, _ = c.Seek(prefix) {
			if n >= limit {
				return false, nil
			}
			if err := c.Delete(); err != nil {
				return false, err
			}
			n++
		}
	}
	return true, tx.Bucket(bktTrash).Delete(sidKey(sid))
}

// flushAccessTimes persists the sliding-TTL access times of loaded streams at shutdown.
func (e *Engine) flushAccessTimes() {
	e.mu.Lock()
	var ops []*op
	for _, s := range e.byID {
		s.mu.Lock()
		if !s.deleted && s.m.TTL != nil && s.access.Load() > s.m.AccessMs {
			nm := s.edit()
			nm.AccessMs = s.access.Load()
			s.m = nm
			o := &op{s: s, after: nm}
			if e.q.push(o) == nil {
				ops = append(ops, o)
			}
		}
		s.mu.Unlock()
	}
	e.mu.Unlock()
	for _, o := range ops {
		<-o.done
	}
}
