package subs

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsd-project/dsd/model"
)

// TestWorkerFollowsTheModel drives the worker and the model side by side on random
// schedules: appends to shared links of a webhook and a pull-wake subscription, clock
// jumps over leases and backoffs, receiver answers (500, 2xx, {"done":true}), callbacks,
// claims, heartbeats, acks, releases and stale replays, injected commit failures, a
// missing wake stream, and restarts. After every operation, once the worker is idle, its
// persisted state, in-memory machine, cursors, wake events and webhook POSTs must be
// exactly what the sequential model oracle computed. Spec: base protocol §7.1-§7.3, D10.
func TestWorkerFollowsTheModel(t *testing.T) {
	for seed := range uint64(10) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runFollowsTheModel(t, seed, 120) })
	}
}

// sideBySide is the state of one run.
type sideBySide struct {
	t      *testing.T
	rnd    *rand.Rand
	h      *harness
	r      *receiver
	wh, pw *oracle
	modeMu sync.Mutex
	mode   string // the receiver's answer: "fail", "ok" or "done"
	log    []string
	tokens []heldToken
}

// heldToken is a token the test got from the worker, with the fence the oracle sees for it.
type heldToken struct {
	o      *oracle
	token  string
	wakeID string
	gen    uint64
	fence  model.Fence
}

func (x *sideBySide) answer() string {
	x.modeMu.Lock()
	defer x.modeMu.Unlock()
	return x.mode
}

func runFollowsTheModel(t *testing.T, seed uint64, ops int) {
	rnd := rand.New(rand.NewPCG(seed, 7))
	u := rnd.Float64()
	x := &sideBySide{t: t, rnd: rnd, mode: "done"}
	x.h = newHarness(t, Options{AllowLoopback: true, Jitter: func() float64 { return u }})
	x.r = newReceiver(t, x.h.clk, func(int) (int, string) {
		switch x.answer() {
		case "fail":
			return 500, "down"
		case "ok":
			return 200, `{}`
		}
		return 200, `{"done":true}`
	})
	wh := webhookSub("wh", "s/*", x.r.srv.URL, 2*time.Second)
	pw := pullSub("pw", "s/*", "wake/q", 3*time.Second)
	pw.Streams = []string{"x/d"}
	x.h.fs.setTail("b", "wake/q", 0)
	x.h.fs.put(wh)
	x.h.fs.put(pw)
	x.wh, x.pw = newOracle(t, wh, x.h.fs, u), newOracle(t, pw, x.h.fs, u)
	x.h.start()
	x.restartOracles()
	x.settle("start")
	for i := range ops {
		op := x.randomOp()
		x.log = append(x.log, fmt.Sprintf("%d %s", i, op))
		x.settle(op)
	}
	if x.wh.posts == nil && x.pw.events == nil {
		t.Fatal("a weak run: no POST and no wake event")
	}
}

func (x *sideBySide) now() int64 { return x.h.clk.Now().UnixMilli() }

func (x *sideBySide) restartOracles() {
	x.wh.restart(x.now())
	x.pw.restart(x.now())
}

// settle waits until the worker is idle, settles the oracles and compares.
func (x *sideBySide) settle(op string) {
	x.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for calm := 0; calm < 3; time.Sleep(time.Millisecond) {
		calm++
		if !x.h.w.sched.idle(x.h.clk.Now()) {
			calm = 0
		}
		if time.Now().After(deadline) {
			x.t.Fatalf("after %s: the worker never became idle", op)
		}
	}
	defer func() {
		if x.t.Failed() {
			x.t.Logf("operations:\n%s", strings.Join(x.log[max(0, len(x.log)-25):], "\n"))
		}
	}()
	for _, o := range []*oracle{x.wh, x.pw} {
		o.settle(x.now(), x.answer)
		o.check(x.h.w, x.r, op)
	}
}

// randomOp performs one random operation on both sides and returns its description.
func (x *sideBySide) randomOp() string {
	switch r := x.rnd.IntN(100); {
	case r < 22:
		return x.appendOp()
	case r < 36:
		d := []time.Duration{time.Millisecond, 400 * time.Millisecond, time.Second, 2 * time.Second, 3 * time.Second, 7 * time.Second, 61 * time.Second}[x.rnd.IntN(7)]
		x.h.clk.advance(d)
		return "advance " + d.String()
	case r < 42:
		x.modeMu.Lock()
		x.mode = []string{"fail", "ok", "done"}[x.rnd.IntN(3)]
		x.modeMu.Unlock()
		return "receiver answers " + x.answer()
	case r < 52:
		return x.callbackOp()
	case r < 64:
		return x.claimOp()
	case r < 80:
		return x.pullAckOp()
	case r < 85:
		return x.releaseOp()
	case r < 89:
		o := []*oracle{x.wh, x.pw}[x.rnd.IntN(2)]
		n := 1 + x.rnd.IntN(2)
		x.h.fs.mu.Lock()
		x.h.fs.fail[o.s.Key] = n
		x.h.fs.mu.Unlock()
		o.fail = n
		return fmt.Sprintf("the next %d commits of %s fail", n, o.s.Key.ID)
	case r < 93:
		if x.h.fs.hasStream("b", "wake/q") {
			x.h.fs.dropStream("b", "wake/q")
			return "wake stream deleted"
		}
		x.h.fs.setTail("b", "wake/q", 0)
		return "wake stream created"
	default:
		x.h.restart()
		x.restartOracles()
		return "restart"
	}
}

func (x *sideBySide) appendOp() string {
	p := []string{"s/a", "s/b", "s/c", "x/d"}[x.rnd.IntN(4)]
	n := 1 + x.rnd.IntN(5)
	x.h.appendTo("b", p, n)
	for _, o := range []*oracle{x.wh, x.pw} {
		if o.routes(p) {
			o.request(x.now())
		}
	}
	return fmt.Sprintf("append %d to %s", n, p)
}

// randomAcks are acks over o's links: mostly valid, sometimes back, past the tail or of an
// unlinked stream.
func (x *sideBySide) randomAcks(o *oracle) []AckMove {
	var acks []AckMove
	for _, l := range o.links() {
		if x.rnd.IntN(2) == 0 {
			continue
		}
		off := l.Acked + model.Offset(x.rnd.IntN(int(l.Tail-l.Acked)+1))
		switch x.rnd.IntN(12) {
		case 0:
			off = l.Tail + 1
		case 1:
			if l.Acked > 0 {
				off = l.Acked - 1
			}
		}
		acks = append(acks, AckMove{Path: l.Path, Offset: off})
	}
	if x.rnd.IntN(12) == 0 {
		acks = append(acks, AckMove{Path: "nope/x", Offset: 0})
	}
	return acks
}

// pickToken returns a held token of o: mostly the newest, sometimes an older one.
func (x *sideBySide) pickToken(o *oracle) (heldToken, bool) {
	var mine []heldToken
	for _, h := range x.tokens {
		if h.o == o {
			mine = append(mine, h)
		}
	}
	if len(mine) == 0 {
		return heldToken{}, false
	}
	if x.rnd.IntN(4) == 0 {
		return mine[x.rnd.IntN(len(mine))], true
	}
	return mine[len(mine)-1], true
}

// body returns the wake_id and generation a request presents with h: usually its own,
// sometimes a wrong generation.
func (x *sideBySide) body(h heldToken) (string, uint64, string, uint64) {
	gen := h.gen
	if x.rnd.IntN(10) == 0 {
		gen++
	}
	return h.wakeID, gen, h.fence.TokenWake, gen
}

func (x *sideBySide) callbackOp() string {
	// Every POST so far hands out a callback token.
	for i := range x.r.count() {
		p := x.r.get(i).p
		if !x.hasToken(p.CallbackToken) {
			x.tokens = append(x.tokens, heldToken{o: x.wh, token: p.CallbackToken, wakeID: p.WakeID, gen: p.Generation,
				fence: model.Fence{TokenInc: x.wh.s.Incarnation, TokenGen: p.Generation, TokenWake: x.wh.name(p.WakeID, p.Generation)}})
		}
	}
	h, ok := x.pickToken(x.wh)
	if !ok {
		return "callback: no token yet"
	}
	return x.ackBy("callback", x.wh, h, 2, x.h.w.Callback)
}

// ackBy sends random acks by h's token of o through send (Worker.Callback or
// Worker.Ack), done one time in doneOneIn, and compares the answer with the oracle's.
func (x *sideBySide) ackBy(name string, o *oracle, h heldToken, doneOneIn int,
	send func(context.Context, Key, string, AckRequest) (AckReply, error)) string {
	acks, done := x.randomAcks(o), x.rnd.IntN(doneOneIn) == 0
	wid, gen, owid, ogen := x.body(h)
	got, gerr := send(context.Background(), o.s.Key, h.token, AckRequest{WakeID: wid, Generation: gen, Acks: acks, Done: done})
	f := h.fence
	f.WakeID, f.Gen = owid, ogen
	want, werr := o.ack(f, acks, done, x.now())
	x.compare(name, got, gerr, want, werr)
	return fmt.Sprintf("%s gen %d done=%v acks %v: %v", name, gen, done, acks, gerr)
}

func (x *sideBySide) hasToken(tok string) bool {
	for _, h := range x.tokens {
		if h.token == tok {
			return true
		}
	}
	return false
}

func (x *sideBySide) claimOp() string {
	worker := fmt.Sprint("worker-", x.rnd.IntN(3))
	c, gerr := x.h.w.Claim(context.Background(), x.pw.s.Key, worker)
	wk, werr := x.pw.claim(worker, x.now())
	if gerr == nil && werr == nil {
		got := model.SubWake{ID: x.pw.name(c.WakeID, c.Generation), Gen: c.Generation, Snapshot: c.Streams}
		want := model.SubWake{ID: wk.ID, Gen: wk.Gen, Snapshot: wk.Snapshot}
		x.compare("claim", got, nil, want, nil)
		x.tokens = append(x.tokens, heldToken{o: x.pw, token: c.Token, wakeID: c.WakeID, gen: c.Generation,
			fence: model.Fence{TokenInc: x.pw.s.Incarnation, TokenGen: c.Generation, TokenWake: wk.ID, Claim: true}})
	} else {
		x.compare("claim", nil, gerr, nil, werr)
	}
	return fmt.Sprintf("claim by %s: gen %d %v", worker, c.Generation, gerr)
}

func (x *sideBySide) pullAckOp() string {
	h, ok := x.pickToken(x.pw)
	if !ok {
		return "ack: no claim yet"
	}
	return x.ackBy("ack", x.pw, h, 3, x.h.w.Ack)
}

func (x *sideBySide) releaseOp() string {
	h, ok := x.pickToken(x.pw)
	if !ok {
		return "release: no claim yet"
	}
	wid, gen, owid, ogen := x.body(h)
	gerr := x.h.w.Release(context.Background(), x.pw.s.Key, h.token, ReleaseRequest{WakeID: wid, Generation: gen})
	f := h.fence
	f.WakeID, f.Gen = owid, ogen
	werr := x.pw.release(f, x.now())
	x.compare("release", nil, gerr, nil, werr)
	return fmt.Sprintf("release gen %d: %v", gen, gerr)
}

// compare fails on different replies or errors (by message: the model's errors carry the
// offending stream).
func (x *sideBySide) compare(what string, got any, gerr error, want any, werr error) {
	x.t.Helper()
	var gce, wce *ClaimedError
	switch {
	case (gerr == nil) != (werr == nil):
		x.t.Fatalf("%s: worker %v, model %v", what, gerr, werr)
	case gerr != nil && errors.As(gerr, &gce) != errors.As(werr, &wce):
		x.t.Fatalf("%s: worker %v, model %v", what, gerr, werr)
	case gce != nil && (*gce != *wce):
		x.t.Fatalf("%s: worker %+v, model %+v", what, *gce, *wce)
	case gerr != nil && gerr.Error() != werr.Error():
		x.t.Fatalf("%s: worker %q, model %q", what, gerr, werr)
	case fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want):
		x.t.Fatalf("%s: worker %+v, model %+v", what, got, want)
	}
}
