package engine

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/dsd-project/dsd/engine/storage"
	"github.com/dsd-project/dsd/model"
)

// stream is the in-memory state of one loaded stream incarnation.
//
// m is the decided state: every queued op is already applied to it. vis is the committed
// state that readers see (nil until the creating op commits). Both point to immutable
// values: a change copies m, edits the copy and makes it the new m and the op's after.
type stream struct {
	key    string
	sid    uint64
	isJSON bool // immutable per incarnation

	mu         sync.Mutex
	m          *streamMeta
	vis        *streamMeta
	deleted    bool // a delete is decided (writers see 404)
	visDeleted bool // the delete committed (readers see 404)
	lastLSN    uint64
	stored     *streamMeta               // the meta last queued to, or loaded from, storage (its access time as adopt or a reload set it)
	producers  map[string]*producerState // loaded producer states (nil until the first)
	evicted    bool                      // unloaded (evict.go): callers holding s look it up again
	notify     chan struct{}             // waiters' wake-up: made by the first waiter, closed (and dropped) at the next publish
	cache      tailCache
	cacheUsed  int64 // Unix ms of the last publish or cache read

	broken atomic.Pointer[error] // a commit of this stream alone failed: reload pending (D4)
	access atomic.Int64          // last GET/POST, Unix ms (sliding TTL)
	live   atomic.Int32          // open long-poll and SSE requests (A-14: never expire while > 0)
	pins   atomic.Int32          // bootstraps in flight: retained data is not trimmed meanwhile
}

func newStream(m *streamMeta, committed bool, cacheBytes int) *stream {
	s := &stream{key: model.StreamKey{Bucket: m.Bucket, Stream: m.Stream}.String(), sid: m.ID,
		isJSON: m.isJSON(),
		m:      m}
	if committed {
		s.vis = m
	}
	s.cache.max = cacheBytes
	s.cache.reset(m.Tail)
	s.access.Store(m.AccessMs)
	s.stored = m // loaded from storage, or created by an op that stores m
	return s
}

// storedMeta returns nm as the meta an op queued for s stores, and notes it as the
// stored one (metaLags, metaRefresh). s.mu is held.
func (s *stream) storedMeta(nm *streamMeta) *storage.Meta {
	s.stored = nm
	return nm.stored()
}

// metaLags reports whether the decided meta of s is newer than its stored one in a field
// that loading does not derive: the last write time, which appends leave in memory for up
// to metaRefreshIdleMs (metaRefresh). s.mu is held.
func (s *stream) metaLags() bool {
	return s.m.LastWriteMs > s.stored.LastWriteMs
}

// edit returns a copy of the decided meta to change; the caller installs it with set.
func (s *stream) edit() *streamMeta {
	c := *s.m
	return &c
}

// view returns the committed state, or nil when the stream is not (or no longer) visible.
func (s *stream) view() *streamMeta {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.visDeleted {
		return nil
	}
	return s.vis
}

// publish installs committed state, feeds the tail cache and wakes waiters. It runs on
// the committer after the commit.
func (s *stream) publish(after *streamMeta, msgs []cachedMsg) {
	s.mu.Lock()
	if after != nil {
		s.vis = after
	}
	if len(msgs) > 0 {
		s.cache.add(msgs)
		s.cacheUsed = time.Now().UnixMilli()
	}
	s.wakeLocked()
	s.mu.Unlock()
}

// waitCh returns the channel the next publication closes, made on demand so that a
// publish with nobody waiting allocates nothing. s.mu is held.
func (s *stream) waitCh() chan struct{} {
	if s.notify == nil {
		s.notify = make(chan struct{})
	}
	return s.notify
}

// wakeLocked wakes every waiter of waitCh. s.mu is held.
func (s *stream) wakeLocked() {
	if s.notify != nil {
		close(s.notify)
		s.notify = nil
	}
}

// publishDelete marks the incarnation deleted for readers and wakes waiters.
func (s *stream) publishDelete() {
	s.mu.Lock()
	s.visDeleted = true
	s.cache.reset(0)
	s.wakeLocked()
	s.mu.Unlock()
}

// lookup returns the loaded newest incarnation bound to key, loading it from storage when
// needed; nil when no stream is bound to key.
func (e *Engine) lookup(key string) (*stream, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.lookupLocked(key)
}

// lookupKey is lookup(k.String()) without building the string when the stream is loaded
// (the hot path of every append and read: a map index by string(bytes) does not allocate,
// and concurrent requests share e.mu for reading).
func (e *Engine) lookupKey(k model.StreamKey) (*stream, error) {
	var buf [128]byte
	b := append(append(append(buf[:0], k.Bucket...), '/'), k.Stream...)
	e.mu.RLock()
	s, ok := e.streams[string(b)]
	e.mu.RUnlock()
	if ok {
		return s, nil
	}
	return e.lookup(string(b))
}

func (e *Engine) lookupLocked(key string) (*stream, error) {
	if s, ok := e.streams[key]; ok {
		return s, nil
	}
	sm, err := e.st.Stream(key)
	if err != nil || sm == nil {
		return nil, err
	}
	return e.adopt(fromStored(sm), true), nil
}

// adopt registers a stream loaded from storage; bound says whether its path's name entry
// points to it. e.mu is held.
func (e *Engine) adopt(m *streamMeta, bound bool) *stream {
	if s, ok := e.byID[m.ID]; ok {
		if bound {
			e.streams[s.key] = s
		}
		return s
	}
	if m.AccessMs < e.startedMs {
		// Reads do not write; after a restart every sliding window starts afresh rather
		// than expire early.
		m.AccessMs = e.startedMs
	}
	if a, ok := e.accessed[m.ID]; ok { // read while it was unloaded (evictLocked)
		m.AccessMs = max(m.AccessMs, a)
		delete(e.accessed, m.ID)
	}
	s := newStream(m, true, e.opts.TailCacheBytes)
	if bound {
		e.streams[s.key] = s
	}
	e.byID[m.ID] = s
	return s
}

// byIDLocked returns the loaded incarnation with the given sid, loading it when needed
// (fork sources). e.mu is held.
func (e *Engine) byIDLocked(sid uint64) (*stream, error) {
	if s, ok := e.byID[sid]; ok {
		return s, nil
	}
	sm, bound, err := e.st.Incarnation(sid)
	m := fromStored(sm)
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, model.ErrStreamNotFound
	}
	if s, ok := e.streams[model.StreamKey{Bucket: m.Bucket, Stream: m.Stream}.String()]; ok && s.sid == sid {
		return s, nil
	}
	return e.adopt(m, bound), nil
}
