// Package engine is dsd's storage engine: durable streams on one bbolt file, with group
// commit (many requests per fsync, D4), an in-memory view of every loaded stream, a tail
// cache, and waiters woken after commit for long-poll and SSE readers.
//
// Every decision (closure, content type, producer admission, Stream-Seq, offsets) is taken
// against the stream's in-memory state under the stream's lock, then queued to the
// committer as one operation; the caller is answered only after the transaction holding
// that operation has committed and synced. Readers see only committed state.
package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/dsd-project/dsd/model"
)

// Options configure an Engine. The zero value is usable.
type Options struct {
	// OpenTimeout bounds the wait for the data file's lock; a second process on the same
	// data dir fails after it (default 1s).
	OpenTimeout time.Duration
	// NoSync skips fsync. UNSAFE: acknowledged data can be lost on a crash. Tests only.
	NoSync bool
	// Clock returns the current time (default time.Now).
	Clock func() time.Time
	// ReadChunkBytes is the target size of one catch-up response (default 1 MiB, A-16).
	ReadChunkBytes int
	// TailCacheBytes bounds the recent data kept in memory per stream (default 256 KiB).
	TailCacheBytes int
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
	if o.SweepInterval == 0 {
		o.SweepInterval = time.Second
	}
}

// Engine is the storage engine. It is safe for concurrent use.
type Engine struct {
	db   *bolt.DB
	opts Options
	now  func() time.Time

	mu      sync.Mutex
	streams map[string]*stream // by "{bucket}/{stream}": the newest incarnation
	byID    map[uint64]*stream // loaded incarnations by sid (fork sources too)
	buckets map[string]*bucketState
	nextSID uint64

	q         commitQueue
	failed    atomic.Pointer[error] // sticky storage failure (D4)
	closing   atomic.Bool
	stop      chan struct{}
	bg        sync.WaitGroup
	startedMs int64

	commitHook atomic.Pointer[func() error] // tests: fault injection before each commit
	pubHook    atomic.Pointer[func()]       // tests: runs between a commit and its publication
}

// ErrLocked is returned by Open when another process holds the data file.
var ErrLocked = errors.New("engine: the data directory is in use by another process")

// Open opens (creating if needed) the engine's data file "dsd.db" under dir.
func Open(dir string, opts Options) (*Engine, error) {
	opts.defaults()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "dsd.db")
	db, err := bolt.Open(path, 0o600, &bolt.Options{
		Timeout:         opts.OpenTimeout,
		NoSync:          opts.NoSync,
		InitialMmapSize: 1 << 30,
		FreelistType:    bolt.FreelistMapType,
	})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("%w (%s)", ErrLocked, path)
	}
	if err != nil {
		return nil, fmt.Errorf("engine: open %s: %w", path, err)
	}
	e := &Engine{
		db: db, opts: opts, now: opts.Clock,
		streams: make(map[string]*stream), byID: make(map[uint64]*stream),
		buckets: make(map[string]*bucketState), stop: make(chan struct{}),
	}
	e.startedMs = e.now().UnixMilli()
	if err := e.initSchema(); err != nil {
		db.Close()
		return nil, err
	}
	e.q.init()
	e.bg.Add(2)
	go e.commitLoop()
	go e.sweepLoop()
	return e, nil
}

func (e *Engine) initSchema() error {
	return e.db.Update(func(tx *bolt.Tx) error {
		for _, name := range allBuckets {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		sys := tx.Bucket(bktSystem)
		switch v := sys.Get(keyFormat); {
		case v == nil:
			if err := sys.Put(keyFormat, []byte(formatVersion)); err != nil {
				return err
			}
		case string(v) != formatVersion:
			return fmt.Errorf("engine: data file format %q, this build reads %q", v, formatVersion)
		}
		if v := sys.Get(keyNextSID); v != nil {
			e.nextSID = getU64(v)
		}
		return nil
	})
}

// Close stops background work, commits what is queued, and closes the data file. Calls
// after Close fail with model.ErrShuttingDown.
func (e *Engine) Close() error {
	if !e.closing.CompareAndSwap(false, true) {
		return nil
	}
	e.flushAccessTimes()
	close(e.stop)
	e.q.close()
	e.bg.Wait()
	return e.db.Close()
}

// Path returns the data file's path.
func (e *Engine) Path() string { return e.db.Path() }

// checkWritable returns the sticky failure or the shutdown error, if any.
func (e *Engine) checkWritable() error {
	if p := e.failed.Load(); p != nil {
		return fmt.Errorf("%w: %v", model.ErrStorageFailed, *p)
	}
	if e.closing.Load() {
		return model.ErrShuttingDown
	}
	return nil
}
