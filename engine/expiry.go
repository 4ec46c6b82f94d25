package engine

import (
	"container/heap"
	"math"
	"sync"
	"time"
)

// expiryIndex holds the streams with a TTL or an expiry time, per bucket, each in a
// min-heap by a lower bound of the time it expires: a sliding TTL only moves later, so an
// entry that comes due without having expired goes back with its current bound. A
// committed deletion removes its stream's entry (remove), so the index holds about one
// entry per stored stream with a lifetime, whatever the churn; the buckets are in a heap
// by their first due entry, so a sweep finds the buckets due in time of their number,
// not of all buckets. The index is complete (built) once one scan of every stored stream
// has run; until then expiry scans storage (sweep.go). Its lock is a leaf: nothing else
// is taken under it.
type expiryIndex struct {
	mu      sync.Mutex
	built   bool
	buckets map[string]*expiryHeap
	due     bucketsByDue   // the non-empty bucket heaps by their first entry's due
	at      map[uint64]int // each indexed sid's position in its bucket's heap
}

// add indexes a stream of bucket (once per sid).
func (x *expiryIndex) add(bucket string, en expiryEntry) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.buckets == nil {
		x.buckets, x.at = make(map[string]*expiryHeap), make(map[uint64]int)
	}
	if _, ok := x.at[en.sid]; ok {
		return
	}
	h := x.buckets[bucket]
	if h == nil {
		h = &expiryHeap{at: x.at, bucket: bucket}
		x.buckets[bucket] = h
		heap.Push(h, en)
		heap.Push(&x.due, h)
		return
	}
	heap.Push(h, en)
	x.settle(h)
}

// remove drops the entry of stream sid of bucket, if any.
func (x *expiryIndex) remove(bucket string, sid uint64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	i, ok := x.at[sid]
	if !ok {
		return
	}
	h := x.buckets[bucket]
	heap.Remove(h, i)
	x.settle(h)
}

// popDue removes and returns the bucket's entries due at or before now (Unix ms).
func (x *expiryIndex) popDue(bucket string, now int64) []expiryEntry {
	x.mu.Lock()
	defer x.mu.Unlock()
	h := x.buckets[bucket]
	if h == nil {
		return nil
	}
	var out []expiryEntry
	for h.Len() > 0 && h.es[0].due <= now {
		out = append(out, heap.Pop(h).(expiryEntry))
	}
	x.settle(h)
	return out
}

// settle restores the bucket order after a change to h, dropping h when empty. x.mu is
// held.
func (x *expiryIndex) settle(h *expiryHeap) {
	if h.Len() > 0 {
		heap.Fix(&x.due, h.pos)
		return
	}
	heap.Remove(&x.due, h.pos)
	delete(x.buckets, h.bucket)
}

// complete reports whether the index holds every stream with a lifetime.
func (x *expiryIndex) complete() bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.built
}

func (x *expiryIndex) markBuilt() {
	x.mu.Lock()
	x.built = true
	x.mu.Unlock()
}

// bucketsDue lists the buckets with an entry due at or before now (Unix ms), visiting
// only those and their children in the bucket heap.
func (x *expiryIndex) bucketsDue(now int64) []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	var out []string
	for next := []int{0}; len(next) > 0; {
		i := next[len(next)-1]
		next = next[:len(next)-1]
		if i < len(x.due) && x.due[i].es[0].due <= now {
			out = append(out, x.due[i].bucket)
			next = append(next, 2*i+1, 2*i+2)
		}
	}
	return out
}

// dueMs returns the first Unix ms at which m may have expired after its last access at
// access (math.MaxInt64: no lifetime). See expired.
func (m *streamMeta) dueMs(access int64) int64 {
	due := int64(math.MaxInt64)
	if m.ExpiresMs != nil {
		due = *m.ExpiresMs
	}
	if m.TTL != nil {
		due = min(due, access+int64(*m.TTL)*1000+1)
	}
	return due
}

// indexLifetime indexes m when it has a lifetime, last accessed at access (Unix ms).
func (e *Engine) indexLifetime(m *streamMeta, key string, access int64) {
	if m.TTL != nil || m.ExpiresMs != nil {
		e.expiry.add(m.Bucket, expiryEntry{due: m.dueMs(access), sid: m.ID, key: key})
	}
}

// expireDueLocked expires the bucket's indexed streams whose lifetime has ended
// and returns the highest lsn of those deletions (0: none). Entries come due without
// the stream having expired (its sliding window moved, or live readers hold it) go back
// with their new bound; entries of streams deleted meanwhile are dropped. e.mu is held.
func (e *Engine) expireDueLocked(bucket string, now time.Time) uint64 {
	var lsn uint64
	ms := now.UnixMilli()
	for _, en := range e.expiry.popDue(bucket, ms) {
		s, ok := e.byID[en.sid]
		if !ok {
			sm, err := e.st.Stream(en.key)
			if err != nil {
				e.expiry.add(bucket, en) // retried at the next sweep
				continue
			}
			if sm == nil || sm.ID != en.sid || sm.SoftDeleted {
				continue
			}
			m := fromStored(sm)
			if access := e.accessOfLocked(m); !m.expired(now, access) {
				e.indexLifetime(m, en.key, access)
				continue
			}
			s = e.adopt(m, true)
		}
		s.mu.Lock()
		switch {
		case s.deleted || s.m.SoftDeleted || s.evicted:
		case s.live.Load() != 0 || !s.m.expired(now, s.access.Load()):
			en.due = max(s.m.dueMs(s.access.Load()), ms) // live: looked at again from the next pass on
			e.expiry.add(bucket, en)
		default:
			if err := e.expireLocked(s); err != nil {
				e.expiry.add(bucket, en) // retried at the next sweep
			} else {
				lsn = max(lsn, s.lastLSN)
			}
		}
		s.mu.Unlock()
	}
	return lsn
}

// expireIndexed runs expireDueLocked on every bucket with an entry due.
func (e *Engine) expireIndexed() {
	now := e.now()
	for _, b := range e.expiry.bucketsDue(now.UnixMilli()) {
		e.mu.Lock()
		e.expireDueLocked(b, now)
		e.mu.Unlock()
	}
}
