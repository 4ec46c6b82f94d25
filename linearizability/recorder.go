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
	if out.Unknown() {
		op.Return = 0
	}
	c.r.mu.Lock()
	c.r.ops = append(c.r.ops, op)
	c.r.mu.Unlock()
	if out.Unknown() {
		c.id = c.r.newClientID()
	}
	return out
}

// DoBatch performs one append-batch request and records each frame as its own append
// (extension §4: a frame is an independent logical append), all with the request's call
// and return times. Frames of one request are concurrent operations, so each is
// recorded under a client id of its own; an unknown outcome leaves every frame unknown.
func (c *ClientRecorder) DoBatch(frames []Input, f func() []Output) []Output {
	call := c.r.now()
	outs := f()
	ret := c.r.now()
	c.r.mu.Lock()
	defer c.r.mu.Unlock()
	for i, in := range frames {
		op := Op{Client: c.r.clients, Call: call, Return: ret, Input: in, Output: outs[i]}
		c.r.clients++
		if outs[i].Unknown() {
			op.Return = 0
		}
		c.r.ops = append(c.r.ops, op)
	}
	return outs
}
