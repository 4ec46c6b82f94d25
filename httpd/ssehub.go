package httpd

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/model"
)

// sseWriteTimeout bounds one write to a parked subscriber whose socket stayed in the
// netpoller (TLS; not Unix); a parked socket (fdConn) does not wait at all. A write only
// waits when the socket's buffer is full; a subscriber that cannot take an event leaves the
// hub for a goroutine of its own (sseResume), so that no subscriber waits for another.
const sseWriteTimeout = 5 * time.Millisecond

// sseSub is an SSE response on a hijacked connection, parked in a hub once caught up: the
// connection and its position, no goroutine, one 128-byte allocation (TestSSESubSize) (issue 19: a parked
// subscriber's memory is mostly its socket's).
type sseSub struct {
	c        sseConn
	q        parkedQuery
	next     model.Offset // where the next read starts (its last control event's offset)
	end      model.Offset // where its last read ended: it waits for data past it (D9 holdBack)
	nextRec  uint64       // the record ordinal at next (record-aware reads)
	id       uint64       // the stream incarnation its reads saw
	first    uint64       // the stream's first record ordinal as last read (control events)
	deadline int64        // monoNow at which the response ends (SSEMaxAge)
	lastSent int64        // monoNow of its last write
	enc      sseEnc
	dead     bool
}

// query is the readQuery s continues with: binary streams' events end at message ends
// (Handler.sse sets bounds the same way).
func (s *sseSub) query() readQuery {
	return readQuery{live: liveSSE, cursor: s.q.cursor, rec: s.q.rec, bounds: s.enc == encBase64}
}

// at moves s past the read res, which really ended at end.
func (s *sseSub) at(res engine.ReadResult, end model.Offset) {
	s.next, s.end, s.nextRec, s.id, s.first = res.Next, end, res.RecordNext, res.Info.ID, res.Info.RecordFirst
}

// leaver is a subscriber whose socket could not take the rest of a chunk at once: it is
// handed to sseResume once the hub has dropped it from its list.
type leaver struct {
	s    *sseSub
	rest []byte
	res  engine.ReadResult
}

type hubKey struct {
	key model.StreamKey
	id  uint64 // stream incarnation
}

// hubSet holds one hub per stream incarnation with parked subscribers.
type hubSet struct {
	mu     sync.Mutex
	hubs   map[hubKey]*sseHub
	closed bool
	wg     sync.WaitGroup // running hubs
	burst  *burstFree     // made by the first join
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
	leaving []leaver // subscribers that leave for a goroutine of their own (compact)
	kick    context.CancelFunc
	stop    bool

	subs []*sseSub // owned by run
}

// join parks sub in the hub of its stream incarnation, creating the hub (which then owns
// lr) if needed; otherwise lr is closed.
func (hs *hubSet) join(h *Handler, key model.StreamKey, id uint64, lr LiveReader, sub *sseSub) {
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
		hs.burst = newBurstFree()
	}
	hb := hs.hubs[k]
	spare := lr
	if hb == nil {
		// The key's strings may share the first subscriber's request line: keep a copy.
		k.key = model.StreamKey{Bucket: strings.Clone(key.Bucket), Stream: strings.Clone(key.Stream)}
		hb = &sseHub{h: h, set: hs, k: k, lr: lr}
		hs.hubs[k] = hb
		spare = nil
		hs.wg.Go(hb.run)
	}
	hb.mu.Lock()
	hb.pending = append(hb.pending, sub)
	kick := hb.kick
	hb.mu.Unlock()
	burst := hs.burst
	hs.mu.Unlock()
	if kick != nil {
		kick()
	}
	if spare != nil {
		spare.Close()
	}
	burst.joined()
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
	if hs.burst != nil {
		hs.burst.stop()
	}
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
		hb.housekeep(monoNow())
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
	alive := true
	if k := hb.keyOf(hb.subs[0], false); hb.allAt(k) {
		alive = hb.deliverGroup(hb.subs) // the usual case: no grouping to allocate per event
	} else {
		for _, members := range hb.groupBy(hb.subs, false) {
			if !hb.deliverGroup(members) {
				alive = false
			}
		}
	}
	hb.compact()
	return alive
}

// allAt reports whether every subscriber's key is k.
func (hb *sseHub) allAt(k groupKey) bool {
	for _, s := range hb.subs {
		if hb.keyOf(s, false) != k {
			return false
		}
	}
	return true
}

// groupBy splits subs into groups that receive identical bytes.
func (hb *sseHub) groupBy(subs []*sseSub, keepalive bool) map[groupKey][]*sseSub {
	if len(subs) == 0 {
		return nil
	}
	groups := make(map[groupKey][]*sseSub)
	for _, s := range subs {
		k := hb.keyOf(s, keepalive)
		groups[k] = append(groups[k], s)
	}
	return groups
}

// deliverGroup reads once for subscribers at the same position and sends them the events.
func (hb *sseHub) deliverGroup(members []*sseSub) bool {
	rep := members[0]
	q := rep.query()
	req := q.nextRequest(engine.ReadResult{Next: rep.next, RecordNext: rep.nextRec})
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
		hb.h.writeEvents(buf, rep.enc, q, res)
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
		req = q.nextRequest(res)
	}
}

// send writes framed bytes to each member, in parallel for large groups; members that
// fail are disconnected.
func (hb *sseHub) send(framed []byte, members []*sseSub, res engine.ReadResult, end model.Offset) {
	now := monoNow()
	write := func(part []*sseSub) {
		for _, s := range part {
			if s.dead {
				continue
			}
			if n, err := s.c.write(framed, sseWriteTimeout); err != nil {
				s.dead = true // out of the hub either way
				if errors.Is(err, os.ErrDeadlineExceeded) {
					hb.mu.Lock()
					hb.leaving = append(hb.leaving, leaver{s, framed[n:], res})
					hb.mu.Unlock()
				} else {
					s.c.abort()
				}
				continue
			}
			s.lastSent = now
			if res.Info.ID != 0 {
				s.at(res, end)
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
func (hb *sseHub) housekeep(now int64) {
	var quiet []*sseSub
	for _, s := range hb.subs {
		switch {
		case now >= s.deadline:
			s.c.finish()
			s.dead = true
		case time.Duration(now-s.lastSent) >= hb.h.cfg.SSEKeepAlive:
			quiet = append(quiet, s)
		}
	}
	for _, members := range hb.groupBy(quiet, true) {
		rep := members[0]
		buf := newChunkBuf(nil)
		hb.h.writeControlEvent(buf, rep.query(), rep.first, rep.next, rep.nextRec, true, false)
		hb.send(frameChunk(buf), members, engine.ReadResult{}, 0)
	}
	hb.compact()
}

// compact drops the subscribers that are done or leaving from the list, then starts a
// goroutine for each of those leaving (which may then join again).
func (hb *sseHub) compact() {
	live := hb.subs[:0]
	for _, s := range hb.subs {
		if !s.dead {
			live = append(live, s)
		}
	}
	clear(hb.subs[len(live):])
	hb.subs = live
	hb.mu.Lock()
	leaving := hb.leaving
	hb.leaving = nil
	hb.mu.Unlock()
	for _, l := range leaving {
		go hb.h.sseResume(hb.k.key, l.s, l.rest, l.res)
	}
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
		due = min(due, s.deadline, s.lastSent+int64(hb.h.cfg.SSEKeepAlive))
	}
	ctx, cancel := context.WithDeadline(context.Background(), monoTime(due))
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

// cursorInput normalizes a client cursor for grouping: cursors that do not steer the
// next cursor (absent, non-numeric, below the current interval) are equivalent.
func (h *Handler) cursorInput(c string) string {
	if c == "" || !model.CursorSteers(h.now(), c) {
		return ""
	}
	return c
}
