package linearizability

import (
	"sync"
	"time"
)

// Recorder collects a concurrent history. Each goroutine records through its own
// ClientRecorder, so one client's operations never overlap (etcd's RecordingClient).
// Timestamps come from time.Since(base), a monotonic clock.
type Recorder struct {
	base time.Time

	mu      sync.Mutex
	ops     []Op
	clients int
	unknown map[string]bool // streams with a write whose outcome is unknown
}

// NewRecorder starts a recording.
func NewRecorder() *Recorder { return &Recorder{base: time.Now()} }

// Client returns a recorder for one sequential client.
func (r *Recorder) Client() *ClientRecorder {
	return &ClientRecorder{r: r, id: r.newClientID()}
}

func (r *Recorder) newClientID() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	id := r.clients
	r.clients++
	return id
}

// Ops returns the operations recorded so far, in recording order.
func (r *Recorder) Ops() []Op {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Op(nil), r.ops...)
}

func (r *Recorder) now() int64 { return int64(time.Since(r.base)) }

// ClientRecorder records one client's operations. It is not safe for concurrent use.
type ClientRecorder struct {
	r  *Recorder
	id int
}

// Do performs one operation and records it: the call time, f, the return time. A read
// whose outcome is unknown is dropped (it observed nothing). A write whose outcome is
// unknown is kept without a return time, and the client continues under a fresh
// client id, since the write may still take effect at any later time (etcd).
func (c *ClientRecorder) Do(in Input, f func() Output) Output {
	call := c.r.now()
	out := f()
	ret := c.r.now()
	if out.Unknown() && !in.IsWrite() {
		return out
	}
	op := Op{Client: c.id, Call: call, Return: ret, Input: in, Output: out}
	c.r.mu.Lock()
	if out.Unknown() {
		op.Return = 0
		c.r.markUnknown(in.Stream)
	}
	c.r.ops = append(c.r.ops, op)
	c.r.mu.Unlock()
	if out.Unknown() {
		c.id = c.r.newClientID()
	}
	return out
}

// markUnknown notes a write with an unknown outcome on stream. r.mu is held.
func (r *Recorder) markUnknown(stream string) {
	if r.unknown == nil {
		r.unknown = map[string]bool{}
	}
	r.unknown[stream] = true
}

// HadUnknown reports whether a write on stream has had an unknown outcome: it may still
// take effect at any time.
func (r *Recorder) HadUnknown(stream string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.unknown[stream]
}
