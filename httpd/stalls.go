package httpd

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dsd-project/dsd/model"
)

// stallSet accounts the bytes held for live and catch-up readers, within one global limit
// (Config.LiveBufferBudget, issue 20). An SSE catch-up step reserves its bytes before it
// reads (reserve), so that readers that do not read cannot make dsd allocate past the
// limit; other writes are counted once they block (hold). Over the limit, the writes in
// progress longest are cut (their sockets reset) until the bytes fit again; a write in
// progress for less than grace is never cut (a reader that keeps up is not one that does
// not read): reservations then wait, first come first served.
type stallSet struct {
	mu         sync.Mutex
	limit      int64 // <= 0: no limit
	grace      time.Duration
	used       int64
	head, tail *stall      // oldest first
	waiters    []*waiter   // reservations waiting for room, in arrival order
	sweep      *time.Timer // set while over the limit: sheds once the oldest write is old enough
	cuts       atomic.Int64
	step       atomic.Int64 // a decaying maximum of the bytes SSE steps held (stepSize)
}

// stall is one write in progress: the bytes it holds, since when, and how to cut it
// (nil until its connection is known).
type stall struct {
	n          int64
	since      time.Time
	cut        func()
	prev, next *stall
	gone       bool // released or cut
}

// waiter is a reservation waiting for room.
type waiter struct {
	n     int64
	cut   func()
	ready chan *stall // the reservation once granted (buffered)
}

// stepSize is what an SSE step reserves before it reads: the larger of sseReserve and a
// decaying maximum of what steps held after reading.
func (ss *stallSet) stepSize() int { return max(sseReserve, int(ss.step.Load())) }

// noteStep records the bytes a step's read came to, encoded; the maximum decays by 1/64
// per step.
func (ss *stallSet) noteStep(n int) {
	old := ss.step.Load()
	ss.step.CompareAndSwap(old, max(int64(n), old-old/64))
}

// hold registers a write of n held bytes that blocks; cut must make that write fail at
// once. Release the stall when the write returns.
func (ss *stallSet) hold(n int, cut func()) *stall {
	now := time.Now()
	ss.mu.Lock()
	s := ss.admit(int64(n), cut, now)
	victims := ss.shed(now, 0)
	ss.grant(now)
	ss.mu.Unlock()
	ss.cutAll(victims)
	return s
}

// reserve takes n bytes for a write about to be prepared (cut as for hold, or nil until
// arm), cutting old writes when they do not fit; while they still do not fit (and other
// writes hold bytes) it waits in line for bytes to be released, until until. Errors:
// model.ErrBusy when the wait times out.
func (ss *stallSet) reserve(n int, until time.Time, cut func()) (*stall, error) {
	now := time.Now()
	ss.mu.Lock()
	victims := ss.shed(now, int64(n))
	if len(ss.waiters) == 0 && ss.fits(int64(n)) {
		s := ss.admit(int64(n), cut, now)
		ss.schedule(now)
		ss.mu.Unlock()
		ss.cutAll(victims)
		return s, nil
	}
	w := &waiter{n: int64(n), cut: cut, ready: make(chan *stall, 1)}
	ss.waiters = append(ss.waiters, w)
	ss.mu.Unlock()
	ss.cutAll(victims)
	for {
		// Poll: the first in line sheds writes that have grown old meanwhile.
		t := time.NewTimer(min(ss.grace/4+time.Millisecond, max(time.Until(until), 0)))
		select {
		case s := <-w.ready:
			t.Stop()
			return s, nil
		case <-t.C:
		}
		now = time.Now()
		ss.mu.Lock()
		victims = nil
		if ss.waiters[0] == w {
			victims = ss.shed(now, w.n)
			ss.grant(now)
		}
		select {
		case s := <-w.ready:
			ss.mu.Unlock()
			ss.cutAll(victims)
			return s, nil
		default:
		}
		timedOut := !now.Before(until)
		if timedOut {
			ss.waiters = slices.DeleteFunc(ss.waiters, func(x *waiter) bool { return x == w })
			ss.grant(now)
		}
		ss.mu.Unlock()
		ss.cutAll(victims)
		if timedOut {
			return nil, model.ErrBusy
		}
	}
}

// fits reports whether n more bytes fit (anything fits when nothing is held); ss.mu is
// held.
func (ss *stallSet) fits(n int64) bool {
	return ss.limit <= 0 || ss.used+n <= ss.limit || ss.head == nil
}

// admit links a new stall of n bytes; ss.mu is held.
func (ss *stallSet) admit(n int64, cut func(), now time.Time) *stall {
	s := &stall{n: n, since: now, cut: cut}
	ss.link(s)
	return s
}

// schedule arms the sweep while the bytes held pass the limit, so that a write grown old
// is cut even when no other write comes; ss.mu is held.
func (ss *stallSet) schedule(now time.Time) {
	if ss.limit <= 0 || ss.used <= ss.limit || ss.head == nil || ss.sweep != nil {
		return
	}
	wait := max(ss.grace-now.Sub(ss.head.since), ss.grace/4) + time.Millisecond
	ss.sweep = time.AfterFunc(wait, ss.sweepNow)
}

// sweepNow sheds the writes grown old past the limit and admits waiting reservations.
func (ss *stallSet) sweepNow() {
	now := time.Now()
	ss.mu.Lock()
	ss.sweep = nil
	victims := ss.shed(now, 0)
	ss.grant(now)
	ss.schedule(now)
	ss.mu.Unlock()
	ss.cutAll(victims)
}

// grant admits waiting reservations, in order, while they fit; ss.mu is held.
func (ss *stallSet) grant(now time.Time) {
	for len(ss.waiters) > 0 && ss.fits(ss.waiters[0].n) {
		w := ss.waiters[0]
		ss.waiters[0] = nil
		ss.waiters = ss.waiters[1:]
		w.ready <- ss.admit(w.n, w.cut, now)
	}
	ss.schedule(now)
}

// arm sets how to cut a reserved write (once its connection is known).
func (ss *stallSet) arm(s *stall, cut func()) {
	ss.mu.Lock()
	s.cut = cut
	ss.mu.Unlock()
}

// resize sets the bytes a write holds (known once it has read and encoded), cutting old
// writes when they no longer fit.
func (ss *stallSet) resize(s *stall, n int) {
	ss.mu.Lock()
	var victims []*stall
	if !s.gone {
		ss.used += int64(n) - s.n
		s.n = int64(n)
		now := time.Now()
		victims = ss.shed(now, 0)
		ss.grant(now)
		ss.schedule(now)
	}
	ss.mu.Unlock()
	ss.cutAll(victims)
}

// release ends a stall (its write returned).
func (ss *stallSet) release(s *stall) {
	if s == nil {
		return
	}
	ss.mu.Lock()
	if !s.gone {
		ss.unlink(s)
		ss.grant(time.Now())
	}
	ss.mu.Unlock()
}

// shed unlinks, oldest first, writes in progress for at least grace that can be cut,
// until extra more bytes fit; ss.mu is held. The caller cuts them after unlocking.
func (ss *stallSet) shed(now time.Time, extra int64) []*stall {
	var victims []*stall
	for v := ss.head; v != nil && ss.limit > 0 && ss.used+extra > ss.limit; {
		if now.Sub(v.since) < ss.grace {
			break // the rest are younger
		}
		next := v.next
		if v.cut != nil {
			ss.unlink(v)
			victims = append(victims, v)
		}
		v = next
	}
	return victims
}

func (ss *stallSet) cutAll(victims []*stall) {
	for _, v := range victims {
		ss.cuts.Add(1)
		v.cut()
	}
}

// link appends s (the youngest); ss.mu is held.
func (ss *stallSet) link(s *stall) {
	s.prev = ss.tail
	if ss.tail != nil {
		ss.tail.next = s
	} else {
		ss.head = s
	}
	ss.tail = s
	ss.used += s.n
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

// inUse reports the bytes held by writes in progress.
func (ss *stallSet) inUse() int64 {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.used
}

// stallGrace is how long a write must have blocked before the budget may cut it.
const stallGrace = 200 * time.Millisecond
