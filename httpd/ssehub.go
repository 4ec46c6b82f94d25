package httpd

import (
	"context"
	"errors"
	"os"
	"sync"
	"time"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/model"
)

// sseWriteTimeout bounds one write to a parked subscriber. A write only waits when the
// socket's buffer is full; a subscriber that cannot take an event in that time leaves the
// hub for a goroutine of its own (sseResume), so that no subscriber waits for another.
const sseWriteTimeout = 5 * time.Millisecond

// sseSub is an SSE subscriber parked in a hub once caught up: a connection and its
// position, no goroutine.
type sseSub struct {
	c        *sseConn
	key      model.StreamKey
	q        readQuery
	enc      sseEnc
	next     model.Offset // where the next read starts (its last control event's offset)
	end      model.Offset // where its last read ended: it waits for data past it (D9 holdBack)
	nextRec  uint64
	info     engine.StreamInfo
	deadline time.Time // the response ends here (SSEMaxAge)
	lastSent time.Time
	dead     bool
}

type hubKey struct {
	key string
	id  uint64 // stream incarnation
}

// hubSet holds one hub per stream incarnation with parked subscribers.
type hubSet struct {
	mu     sync.Mutex
	hubs   map[hubKey]*sseHub
	closed bool
	wg     sync.WaitGroup // running hubs
}

// sseHub serves the parked subscribers of one stream incarnation from one goroutine and
// one engine reader: every event is read and encoded once per group of subscribers at
// the same position, then written to each of them (issue 9: fan-out).
type sseHub struct {
	h   *Handler
	set *hubSet
	k   hubKey
	lr  LiveReader

	mu      sync.Mutex
	pending []*sseSub
	kick    context.CancelFunc
	stop    bool

	subs []*sseSub // owned by run
}

// join parks sub in the hub of its stream incarnation, creating the hub (which then owns
// lr) if needed; otherwise lr is closed.
func (hs *hubSet) join(h *Handler, key string, id uint64, lr LiveReader, sub *sseSub) {
	k := hubKey{key, id}
	hs.mu.Lock()
	if hs.closed {
		hs.mu.Unlock()
		lr.Close()
		sub.c.finish()
		return
	}
	if hs.hubs == nil {
		hs.hubs = make(map[hubKey]*sseHub)
	}
	hb := hs.hubs[k]
	spare := lr
	if hb == nil {
		hb = &sseHub{h: h, set: hs, k: k, lr: lr}
		hs.hubs[k] = hb
		spare = nil
		hs.wg.Go(hb.run)
	}
	hb.mu.Lock()
	hb.pending = append(hb.pending, sub)
	kick := hb.kick
	hb.mu.Unlock()
	hs.mu.Unlock()
	if kick != nil {
		kick()
	}
	if spare != nil {
		spare.Close()
	}
}

// close ends every parked response (server shutdown) and waits, at most wait, until every
// hub has written the responses' final chunks.
func (hs *hubSet) close(wait time.Duration) {
	hs.signal()
	done := make(chan struct{})
	go func() { hs.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(wait):
	}
}

// signal tells every hub to stop.
func (hs *hubSet) signal() {
	hs.mu.Lock()
	hs.closed = true
	for _, hb := range hs.hubs {
		hb.mu.Lock()
		hb.stop = true
		kick := hb.kick
		hb.mu.Unlock()
		if kick != nil {
			kick()
		}
	}
	hs.mu.Unlock()
}

// run is the hub's loop: adopt new subscribers, deliver what they lack, send keep-alives
// and end responses past their max age, then wait for the stream to grow.
func (hb *sseHub) run() {
	for {
		if !hb.adopt() {
			hb.finishAll()
			hb.retire(true)
			return
		}
		if len(hb.subs) == 0 {
			if hb.retire(false) {
				return
			}
			continue
		}
		if !hb.deliver() {
			hb.finishAll()
			hb.retire(true)
			return
		}
		hb.housekeep(time.Now())
		if !hb.wait() {
			hb.finishAll()
			hb.retire(true)
			return
		}
	}
}

// adopt moves joined subscribers into the hub; false once the hub must stop.
func (hb *sseHub) adopt() bool {
	hb.mu.Lock()
	defer hb.mu.Unlock()
	hb.subs = append(hb.subs, hb.pending...)
	clear(hb.pending)
	hb.pending = hb.pending[:0]
	return !hb.stop
}

// retire removes an idle (or, with force, any) hub and releases its reader; false when
// subscribers joined meanwhile.
func (hb *sseHub) retire(force bool) bool {
	hb.set.mu.Lock()
	hb.mu.Lock()
	if !force && len(hb.pending) > 0 {
		hb.mu.Unlock()
		hb.set.mu.Unlock()
		return false
	}
	late := hb.pending
	hb.pending = nil
	hb.stop = true
	hb.mu.Unlock()
	if hb.set.hubs[hb.k] == hb {
		delete(hb.set.hubs, hb.k)
	}
	hb.set.mu.Unlock()
	for _, s := range late {
		s.c.finish()
	}
	hb.lr.Close()
	return true
}

func (hb *sseHub) finishAll() {
	for _, s := range hb.subs {
		if !s.dead {
			s.c.finish()
		}
	}
	hb.subs = nil
}

// groupKey identifies subscribers that receive identical bytes.
type groupKey struct {
	next     model.Offset
	enc      sseEnc
	records  bool
	maxRecs  int
	cursor   string
	keepOnly bool
}

func (hb *sseHub) keyOf(s *sseSub, keepalive bool) groupKey {
	k := groupKey{next: s.next, enc: s.enc, records: s.q.rec != nil, cursor: hb.h.cursorInput(s.q.cursor), keepOnly: keepalive}
	if s.q.rec != nil {
		k.maxRecs = s.q.rec.maxRecords
	}
	return k
}

// deliver sends every subscriber what the stream holds past its position. It returns
// false when the stream is gone.
func (hb *sseHub) deliver() bool {
	groups := make(map[groupKey][]*sseSub)
	for _, s := range hb.subs {
		k := hb.keyOf(s, false)
		groups[k] = append(groups[k], s)
	}
	alive := true
	for _, members := range groups {
		if !hb.deliverGroup(members) {
			alive = false
		}
	}
	hb.compact()
	return alive
}

// deliverGroup reads once for subscribers at the same position and sends them the events.
func (hb *sseHub) deliverGroup(members []*sseSub) bool {
	rep := members[0]
	req := rep.q.nextRequest(engine.ReadResult{Next: rep.next, RecordNext: rep.nextRec})
	for {
		raw, err := hb.lr.Read(req)
		if err != nil {
			// Behind a new retention boundary, or the stream is gone: end these responses
			// as the per-connection loop would (the client resumes, or learns 410/404).
			for _, s := range members {
				s.c.finish()
				s.dead = true
			}
			return !errors.Is(err, model.ErrStreamNotFound) && !errors.Is(err, model.ErrStreamGone)
		}
		res, end := holdBack(rep.enc, raw)
		raw.Data = nil
		if len(res.Data) == 0 && !res.EOF {
			for _, s := range members {
				s.end = max(s.end, end) // only bytes that complete nothing yet: wait past them
			}
			return true
		}
		buf := newChunkBuf(nil)
		hb.h.writeEvents(buf, rep.enc, rep.q, res)
		res.Data = nil
		hb.send(frameChunk(buf), members, res, end)
		if res.EOF {
			for _, s := range members {
				if !s.dead {
					s.c.finish()
					s.dead = true
				}
			}
			return true
		}
		if res.UpToDate {
			return true
		}
		req = rep.q.nextRequest(res)
	}
}

// send writes framed bytes to each member, in parallel for large groups; members that
// fail are disconnected.
func (hb *sseHub) send(framed []byte, members []*sseSub, res engine.ReadResult, end model.Offset) {
	now := time.Now()
	write := func(part []*sseSub) {
		for _, s := range part {
			if s.dead {
				continue
			}
			if n, err := s.c.write(framed, sseWriteTimeout); err != nil {
				s.dead = true // out of the hub either way
				if errors.Is(err, os.ErrDeadlineExceeded) {
					go hb.h.sseResume(s, framed[n:], res)
				} else {
					s.c.abort()
				}
				continue
			}
			s.lastSent = now
			if res.Info.ID != 0 {
				s.next, s.end, s.nextRec, s.info = res.Next, end, res.RecordNext, res.Info
			}
		}
	}
	const per = 128
	if len(members) <= per {
		write(members)
		return
	}
	var wg sync.WaitGroup
	for i := 0; i < len(members); i += per {
		part := members[i:min(i+per, len(members))]
		wg.Add(1)
		go func() { defer wg.Done(); write(part) }()
	}
	wg.Wait()
}

// housekeep ends responses past their max age and sends keep-alive control events to
// subscribers that heard nothing for SSEKeepAlive (D6).
func (hb *sseHub) housekeep(now time.Time) {
	groups := make(map[groupKey][]*sseSub)
	for _, s := range hb.subs {
		switch {
		case !now.Before(s.deadline):
			s.c.finish()
			s.dead = true
		case now.Sub(s.lastSent) >= hb.h.cfg.SSEKeepAlive:
			k := hb.keyOf(s, true)
			groups[k] = append(groups[k], s)
		}
	}
	for _, members := range groups {
		rep := members[0]
		buf := newChunkBuf(nil)
		hb.h.writeControlEvent(buf, rep.q, rep.info, rep.next, rep.nextRec, true, false)
		hb.send(frameChunk(buf), members, engine.ReadResult{}, 0)
	}
	hb.compact()
}

func (hb *sseHub) compact() {
	live := hb.subs[:0]
	for _, s := range hb.subs {
		if !s.dead {
			live = append(live, s)
		}
	}
	clear(hb.subs[len(live):])
	hb.subs = live
}

// wait blocks until the stream grows past the lowest parked position, a subscriber joins,
// a keep-alive or max age falls due, or the hub stops. false: the stream is gone.
func (hb *sseHub) wait() bool {
	if len(hb.subs) == 0 {
		return true
	}
	low, due := hb.subs[0].end, hb.subs[0].deadline
	for _, s := range hb.subs {
		low = min(low, s.end)
		due = minTime(due, s.deadline, s.lastSent.Add(hb.h.cfg.SSEKeepAlive))
	}
	ctx, cancel := context.WithDeadline(context.Background(), due)
	defer cancel()
	hb.mu.Lock()
	if len(hb.pending) > 0 || hb.stop {
		hb.mu.Unlock()
		return true
	}
	hb.kick = cancel
	hb.mu.Unlock()
	_, err := hb.lr.Wait(ctx, low)
	hb.mu.Lock()
	hb.kick = nil
	hb.mu.Unlock()
	return err == nil || ctx.Err() != nil
}

func minTime(a time.Time, bs ...time.Time) time.Time {
	for _, b := range bs {
		if b.Before(a) {
			a = b
		}
	}
	return a
}

// cursorInput normalizes a client cursor for grouping: cursors that do not steer the
// next cursor (absent, non-numeric, below the current interval) are equivalent.
func (h *Handler) cursorInput(c string) string {
	if !model.CursorSteers(h.now(), c) {
		return ""
	}
	return c
}
