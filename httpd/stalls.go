package httpd

import (
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// stallSet accounts the bytes held for live and catch-up readers whose sockets cannot take
// them (a write that blocks), within one global limit (Config.LiveBufferBudget, issue 20):
// when a new stall passes it, the writers blocked longest are cut (their sockets reset),
// until the bytes held fit again. A write blocked for less than grace is never cut: a
// reader that keeps up is not one that does not read.
type stallSet struct {
	mu         sync.Mutex
	limit      int64 // <= 0: no limit
	grace      time.Duration
	used       int64
	head, tail *stall // oldest first
	cuts       atomic.Int64
}

// stall is one blocked write: the bytes it holds and how to cut it.
type stall struct {
	n          int64
	since      time.Time
	cut        func()
	prev, next *stall
	gone       bool // released or cut
}

// hold registers a write of n held bytes that may block; cut must make that write fail
// at once. Release the stall when the write returns.
func (ss *stallSet) hold(n int, cut func()) *stall {
	now := time.Now()
	s := &stall{n: int64(n), since: now, cut: cut}
	var victims []*stall
	ss.mu.Lock()
	s.prev = ss.tail
	if ss.tail != nil {
		ss.tail.next = s
	} else {
		ss.head = s
	}
	ss.tail = s
	ss.used += s.n
	for ss.limit > 0 && ss.used > ss.limit && ss.head != nil && now.Sub(ss.head.since) >= ss.grace {
		v := ss.head
		ss.unlink(v)
		victims = append(victims, v)
	}
	ss.mu.Unlock()
	for _, v := range victims {
		ss.cuts.Add(1)
		v.cut()
	}
	return s
}

// release ends a stall (its write returned).
func (ss *stallSet) release(s *stall) {
	ss.mu.Lock()
	if !s.gone {
		ss.unlink(s)
	}
	ss.mu.Unlock()
}

// unlink removes s; ss.mu is held.
func (ss *stallSet) unlink(s *stall) {
	if s.prev != nil {
		s.prev.next = s.next
	} else {
		ss.head = s.next
	}
	if s.next != nil {
		s.next.prev = s.prev
	} else {
		ss.tail = s.prev
	}
	s.prev, s.next, s.gone = nil, nil, true
	ss.used -= s.n
}

// inUse reports the bytes held by blocked writes.
func (ss *stallSet) inUse() int64 {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.used
}

// stallGrace is how long a write must have blocked before the budget may cut it.
const stallGrace = 500 * time.Millisecond

// minHeldWrite is the smallest response write accounted as a possible stall: smaller
// ones fit net/http's buffers and never block the handler.
const minHeldWrite = 4 << 10

// writeHeld writes p to a response served by net/http (catch-up, long-poll, SSE that is
// not hijacked), flushing when flush is set, as a possible stall: a write cut by the
// budget fails at once and the connection is reset.
func (h *Handler) writeHeld(w http.ResponseWriter, r *http.Request, p []byte, flush bool) error {
	rc := http.NewResponseController(w)
	if len(p) < minHeldWrite {
		_, err := w.Write(p)
		if err == nil && flush {
			err = rc.Flush()
		}
		return err
	}
	st := h.stalls.hold(len(p), func() {
		lingerOff(connOf(r.Context()))
		_ = rc.SetWriteDeadline(time.Now())
	})
	defer h.stalls.release(st)
	_, err := w.Write(p)
	if err == nil && flush {
		err = rc.Flush()
	}
	return err
}

type connKey struct{}

// ConnContext records each connection in its requests' contexts, so that a reader cut by
// the live-buffer budget has its socket reset (http.Server.ConnContext).
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

func connOf(ctx context.Context) net.Conn {
	c, _ := ctx.Value(connKey{}).(net.Conn)
	return c
}

// tcpOf returns the TCP connection under c (through TLS), or nil.
func tcpOf(c net.Conn) *net.TCPConn {
	for c != nil {
		switch v := c.(type) {
		case *net.TCPConn:
			return v
		case interface{ NetConn() net.Conn }:
			c = v.NetConn()
		default:
			return nil
		}
	}
	return nil
}

// lingerOff makes closing c reset it (SO_LINGER 0): the kernel drops its send queue at
// once instead of keeping it as an orphan toward a reader that does not read.
func lingerOff(c net.Conn) {
	if tc := tcpOf(c); tc != nil {
		_ = tc.SetLinger(0)
	}
}
