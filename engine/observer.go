package engine

import (
	"errors"
	"io"
	"time"
)

// Observer receives the engine's measurements for the operator's metrics (D12). Its
// methods run on the committing goroutine (the committer goroutine or a request's own,
// queue.go), one at a time, and must return quickly.
type Observer interface {
	// Committed reports one commit group: ops changes committed together (boltstore: one
	// transaction) that took d, the fsync included; err is the store's failure (nil when
	// durable; a failure of one stream's changes is not one).
	Committed(ops int, d time.Duration, err error)
}

// Ready reports whether the engine accepts writes: nil, model.ErrStorageFailed while the
// store has failed (until a probe succeeds, D4) or model.ErrShuttingDown once Close began.
func (e *Engine) Ready() error { return e.checkWritable() }

// ErrNotSupported: the backend cannot do what was asked (backups and counts of a store
// other than the data file).
var ErrNotSupported = errors.New("engine: not supported by this storage backend")

// backuper and counter are what a backend may offer the operator (boltstore does).
type backuper interface {
	Backup(w io.Writer, size func(int64)) (int64, error)
}

type counter interface {
	Counts() (buckets, streams int, err error)
}

// Backup writes a consistent copy of the store (the data file) to w while the engine
// serves; the copy holds everything committed before the call, and the engine opens it
// like any data file. size, when set, gets the copy's size before the first byte.
// Errors: model.ErrShuttingDown, ErrNotSupported, w's errors, IO.
func (e *Engine) Backup(w io.Writer, size func(int64)) (int64, error) {
	if e.closing.Load() {
		return 0, e.checkWritable()
	}
	b, ok := e.st.(backuper)
	if !ok {
		return 0, ErrNotSupported
	}
	return b.Backup(w, size)
}

// Counts returns how many buckets and streams (bound names) the store holds, for the
// metrics; it may walk the store: per scrape, not per request. Errors: ErrNotSupported.
func (e *Engine) Counts() (buckets, streams int, err error) {
	c, ok := e.st.(counter)
	if !ok {
		return 0, 0, ErrNotSupported
	}
	return c.Counts()
}
