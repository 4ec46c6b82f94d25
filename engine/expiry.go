package engine

import (
	"container/heap"
	"math"
	"sync"
	"time"
)

// expiryIndex holds the streams with a TTL or an expiry time, per bucket, each in a
// min-heap by a lower bound of the time it expires: a sliding TTL only moves later, so an
// entry that comes due without having expired goes back with its current bound. Deleted
// streams' entries are dropped when they come due. The index is complete (built) once
// one scan of every stored stream has run; until then expiry scans storage (sweep.go).
// Its lock is a leaf: nothing else is taken under it.
type expiryIndex struct {
	mu      sync.Mutex
	built   bool
	buckets map[string]*expiryHeap
	indexed map[uint64]struct{} // sids with an entry
}

// expiryEntry is one indexed stream: due is the Unix ms from which it may have expired.
type expiryEntry struct {
	due int64
	sid uint64
	key string
}

type expiryHeap []expiryEntry

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].due < h[j].due }
func (h expiryHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *expiryHeap) Push(x any)        { *h = append(*h, x.(expiryEntry)) }
func (h *expiryHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// add indexes a stream of bucket (once per sid).
func (x *expiryIndex) add(bucket string, en expiryEntry) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.buckets == nil {
		x.buckets, x.indexed = make(map[string]*expiryHeap), make(map[uint64]struct{})
	}
	if _, ok := x.indexed[en.sid]; ok {
		return
	}
	h := x.buckets[bucket]
	if h == nil {
		h = &expiryHeap{}
		x.buckets[bucket] = h
	}
	heap.Push(h, en)
	x.indexed[en.sid] = struct{}{}
}

// popDue removes and returns the bucket's entries due at or before now (Unix ms).
func (x *expiryIndex) popDue(bucket string, now int64) []expiryEntry {
	x.mu.Lock()
	defer x.mu.Unlock()
	h := x.buckets[bucket]
	var out []expiryEntry
	for h != nil && h.Len() > 0 && (*h)[0].due <= now {
		en := heap.Pop(h).(expiryEntry)
		delete(x.indexed, en.sid)
		out = append(out, en)
	}
	if h != nil && h.Len() == 0 {
		delete(x.buckets, bucket)
	}
	return out
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

// bucketsDue lists the buckets with an entry due at or before now (Unix ms).
func (x *expiryIndex) bucketsDue(now int64) []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	var out []string
	for b, h := range x.buckets {
		if (*h)[0].due <= now {
			out = append(out, b)
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
			en.due = max(s.m.dueMs(s.access.Load()), ms+1)
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
