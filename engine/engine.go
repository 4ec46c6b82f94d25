// Package engine is dsd's storage engine: durable streams over a storage backend
// (engine/storage; engine/boltstore by default), with group commit (many requests per
// commit, D4), an in-memory view of every loaded stream, a tail cache, and waiters woken
// after commit for long-poll and SSE readers.
//
// Every decision (closure, content type, producer admission, Stream-Seq, offsets) is taken
// against the stream's in-memory state under the stream's lock, then queued to the
// committer as one operation; the caller is answered only after the backend's commit
// holding that operation is durable (the data file: committed and synced). "The
// committer" is whichever goroutine commits the queue's one busy group: the committer
// goroutine, or an append's own when no group was busy (queue.go). Readers see only
// committed state. A storage failure is handled per D4 (recover.go).
package engine

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dsd-project/dsd/engine/boltstore"
	"github.com/dsd-project/dsd/engine/storage"
	"github.com/dsd-project/dsd/model"
)

// Options configure an Engine. The zero value is usable.
type Options struct {
	// OpenTimeout bounds the wait for the data file's lock; a second process on the same
	// data dir fails after it (default 1s). Open only.
	OpenTimeout time.Duration
	// NoSync skips fsync. UNSAFE: acknowledged data can be lost on a crash. Tests only.
	// Open only.
	NoSync bool
	// Clock returns the current time (default time.Now).
	Clock func() time.Time
	// ReadChunkBytes is the target size of one catch-up response (default 1 MiB, A-16).
	ReadChunkBytes int
	// TailCacheBytes bounds the recent data kept in memory per stream (default 256 KiB).
	TailCacheBytes int
	// LoadedStreams bounds the stream incarnations kept in memory: past it, the sweep
	// unloads the least recently used idle ones, which reload from storage on next use
	// (default 200,000; negative: no bound).
	LoadedStreams int
	// SweepInterval is the period of the expiry and garbage sweeps (default 1s).
	SweepInterval time.Duration
	// Observer, when set, receives commit measurements (metrics, D12).
	Observer Observer
}

func (o *Options) defaults() {
	if o.OpenTimeout == 0 {
		o.OpenTimeout = time.Second
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.ReadChunkBytes == 0 {
		o.ReadChunkBytes = 1 << 20
	}
	if o.TailCacheBytes == 0 {
		o.TailCacheBytes = 256 << 10
	}
	if o.LoadedStreams == 0 {
		o.LoadedStreams = 200000
	}
	if o.SweepInterval == 0 {
		o.SweepInterval = time.Second
	}
}

// Engine is the storage engine. It is safe for concurrent use.
type Engine struct {
	st   storage.Backend
	opts Options
	now  func() time.Time

	mu      sync.RWMutex       // writers Lock; the append/read lookup of a loaded stream only RLocks
	streams map[string]*stream // by "{bucket}/{stream}": the newest incarnation
	byID    map[uint64]*stream // loaded incarnations by sid (fork sources too)
	buckets map[string]*bucketState
	nextSID uint64

	q          commitQueue
	commitMu   sync.Mutex            // held by the committer per group, and by recovery
	group      []storage.Change      // the committer's buffers
	groupIdx   []int                 //
	brokenSet  map[*stream]struct{}  // streams whose commit failed alone (committer's)
	failed     atomic.Pointer[error] // storage failure, until a probe commit succeeds (D4)
	failedAt   time.Time             // when it began (committer's)
	failLogged bool                  // the failure is logged, its recovery not yet (committer's)
	gcFailing  atomic.Bool           // background clean-up is failing (logged once)
	closing    atomic.Bool
	stop       chan struct{}
	bg         sync.WaitGroup
	startedMs  int64

	// lifetimes counts committed creations of streams with a TTL or an expiry (from 1 at
	// open);
	// noLifetimes is its value when a scan of every stored stream found none, so that
	// expiry scans are skipped until such a stream is created (sweep.go).
	lifetimes   atomic.Uint64
	noLifetimes atomic.Uint64
	expiry      expiryIndex      // streams with a lifetime, by when they may expire (expiry.go)
	accessed    map[uint64]int64 // sliding-TTL access times (Unix ms) of evicted streams, by sid (e.mu)
	unloads     atomic.Uint64    // streams evicted (evict.go)

	subsMu   sync.Mutex                                  // orders every subscription decision (subscriptions.go)
	observer atomic.Pointer[func(bucket, stream string)] // told of every published stream change

	pubHook    atomic.Pointer[func()] // tests: runs between a commit and its publication
	appendHook atomic.Pointer[func()] // tests: runs in Append between checkWritable and the stream lookup
}

// ErrLocked is returned by Open when another process holds the data file.
var ErrLocked = boltstore.ErrLocked

// Open opens (creating if needed) the engine's data file "dsd.db" under dir
// (engine/boltstore).
// Errors: ErrLocked, a data file of another format, IO errors.
func Open(dir string, opts Options) (*Engine, error) {
	opts.defaults()
	st, err := boltstore.Open(dir, boltstore.Options{Timeout: opts.OpenTimeout, NoSync: opts.NoSync})
	if err != nil {
		return nil, err
	}
	e, err := OpenBackend(st, opts)
	if err != nil {
		st.Close()
	}
	return e, err
}

// OpenBackend starts an engine over an open storage backend, which it then owns: Close
// closes it. Errors: the backend's read errors.
func OpenBackend(st storage.Backend, opts Options) (*Engine, error) {
	opts.defaults()
	e := &Engine{
		st: st, opts: opts, now: opts.Clock,
		streams: make(map[string]*stream), byID: make(map[uint64]*stream),
		buckets: make(map[string]*bucketState), stop: make(chan struct{}),
		brokenSet: make(map[*stream]struct{}), accessed: make(map[uint64]int64),
	}
	e.startedMs = e.now().UnixMilli()
	sid, err := st.LastSID()
	if err != nil {
		return nil, fmt.Errorf("engine: read the last stream id: %w", err)
	}
	e.nextSID = sid
	e.lifetimes.Store(1)
	e.q.init()
	e.bg.Add(2)
	go e.commitLoop()
	go e.sweepLoop()
	return e, nil
}

// Close stops background work, commits what is queued, and closes the data file. Calls
// after Close fail with model.ErrShuttingDown.
func (e *Engine) Close() error {
	if !e.closing.CompareAndSwap(false, true) {
		return nil
	}
	e.flushMetas()
	close(e.stop)
	e.q.close()
	e.bg.Wait()
	return e.st.Close()
}

// Path returns where the backend keeps the data (boltstore: the data file's path).
func (e *Engine) Path() string { return e.st.Path() }

// checkWritable returns model.ErrStorageFailed while the store has failed (the cause is
// logged, not returned: D4), model.ErrShuttingDown after Close, else nil.
func (e *Engine) checkWritable() error {
	if e.failed.Load() != nil {
		return model.ErrStorageFailed
	}
	if e.closing.Load() {
		return model.ErrShuttingDown
	}
	return nil
}
