package engine

import "time"

// Observer receives the engine's measurements for the operator's metrics (D12). Its
// methods run on the committer's goroutine and must return quickly.
type Observer interface {
	// Committed reports one commit group: ops operations in one bbolt transaction that
	// took d, its fsync included; err is the transaction's error (nil when durable).
	Committed(ops int, d time.Duration, err error)
}

// Ready reports whether the engine accepts writes: nil, model.ErrStorageFailed after a
// storage failure (sticky, D4) or model.ErrShuttingDown once Close began.
func (e *Engine) Ready() error { return e.checkWritable() }
