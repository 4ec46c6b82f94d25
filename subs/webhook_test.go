package subs

import (
	"context"
	"errors"
	"regexp"
	"testing"
	"time"

	"github.com/dsd-project/dsd/model"
)

var wakeIDRE = regexp.MustCompile(`^w_[0-9a-f]{24}$`)

func TestWebhookDoneAcksTheSnapshotAndRewakesForLaterData(t *testing.T) {
	h := newHarness(t, Options{AllowLoopback: true})
	release := make(chan struct{})
	r := newReceiver(t, h.clk, answer(200, `{"done":true}`))
	r.hold = func(n int) {
		if n == 1 {
			<-release
		}
	}
	s := webhookSub("s1", "events/*", r.srv.URL+"/hook", 30*time.Second)
	h.fs.put(s)
	h.start()
	tail := h.appendTo("b", "events/a", 10)
	h.appendTo("b", "other/x", 5) // not linked: never in a payload

	eventually(t, "the first POST", func() bool { return r.count() == 1 })
	got := r.get(0)
	verifyWithJOSE(t, h.w.JWKS(), got.header.Get(SignatureHeader), got.body)
	if ct := got.header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q", ct)
	}
	p := got.p
	if p.SubscriptionID != "s1" || p.Generation != 1 || !wakeIDRE.MatchString(p.WakeID) || p.CallbackURL != s.CallbackURL || p.CallbackToken == "" {
		t.Fatalf("payload %+v", p)
	}
	want := streamJSON{"events/a", LinkGlob, model.ZeroOffset.String(), tail.String(), true}
	if len(p.Streams) != 1 || p.Streams[0] != want {
		t.Fatalf("streams %+v, want [%+v]", p.Streams, want)
	}

	// Data that arrives during the delivery is not acked by this {"done":true}.
	tail2 := h.appendTo("b", "events/a", 7)
	close(release)
	eventually(t, "the second wake's POST", func() bool { return r.count() == 2 })
	p2 := r.get(1).p
	if p2.Generation != 2 || p2.WakeID == p.WakeID {
		t.Fatalf("second wake %+v after %+v", p2, p)
	}
	if p2.Streams[0].Acked != tail.String() || p2.Streams[0].Tail != tail2.String() {
		t.Fatalf("second wake streams %+v: want acked %s tail %s", p2.Streams, tail, tail2)
	}
	eventually(t, "the second snapshot acked", func() bool {
		return h.fs.cursor(s.Key, "events/a") == tail2 && h.fs.state(s.Key).Wake == nil
	})
	never(t, "a third POST without new data", 100*time.Millisecond, func() bool { return r.count() > 2 })
	if st := h.fs.state(s.Key); st.Status != Active || st.Retry.Count != 0 {
		t.Fatalf("state %+v", st)
	}
}

// attemptsFollow drives a failing receiver through the backoff with the fake clock: each
// attempt n+1 comes exactly Backoff(n) after attempt n (jitter fixed at 0), never earlier.
func TestFailingReceiverSeesTheBackoff(t *testing.T) {
	h, r, s := webhookSetup(t, answer(500, "down"), 10*time.Minute)
	h.appendTo("b", "events/a", 3)
	eventually(t, "attempt 1", func() bool { return r.count() == 1 })
	for n, d := range []time.Duration{1, 2, 4, 8, 16} {
		d *= time.Second
		eventually(t, "the failure recorded", func() bool { return h.fs.state(s.Key).Retry.Count == n+1 })
		st := h.fs.state(s.Key)
		if st.Status != Failed || !st.Retry.NextAttemptAt.Equal(h.clk.Now().Add(d)) {
			t.Fatalf("after attempt %d: %+v, want next attempt at now+%v", n+1, st, d)
		}
		h.clk.advance(d - time.Millisecond)
		never(t, "an attempt before the backoff", 60*time.Millisecond, func() bool { return r.count() > n+1 })
		h.clk.advance(time.Millisecond)
		eventually(t, "the next attempt", func() bool { return r.count() == n+2 })
	}
	first := r.get(0).p
	for i := 1; i < r.count(); i++ {
		if p := r.get(i).p; p.WakeID != first.WakeID || p.Generation != 1 || p.CallbackToken != first.CallbackToken {
			t.Fatalf("retry %d changed the wake: %+v vs %+v", i, p, first)
		}
	}
}

func TestLeaseExpiryNeverBypassesTheBackoff(t *testing.T) {
	h, r, s := webhookSetup(t, answer(503, ""), time.Second)
	h.appendTo("b", "events/a", 3)
	eventually(t, "attempt 1", func() bool { return r.count() == 1 })
	eventually(t, "failure 1", func() bool { return h.fs.state(s.Key).Retry.Count == 1 })
	h.clk.advance(time.Second) // lease of generation 1 lapses; retry 1 is due
	eventually(t, "attempt 2", func() bool { return r.count() == 2 })
	if g := r.get(1).p.Generation; g != 2 {
		t.Fatalf("attempt 2 carries generation %d, want 2 (the lease lapsed)", g)
	}
	eventually(t, "failure 2", func() bool { return h.fs.state(s.Key).Retry.Count == 2 })
	h.clk.advance(time.Second) // generation 2's lease lapses; the backoff still has 1 s to go
	eventually(t, "generation 2's lease ended", func() bool { return h.fs.state(s.Key).Wake == nil })
	never(t, "a wake or an attempt on lease expiry", 100*time.Millisecond, func() bool {
		return r.count() > 2 || h.fs.state(s.Key).Generation > 2
	})
	h.clk.advance(time.Second)
	eventually(t, "attempt 3", func() bool { return r.count() == 3 })
	// Attempts at +0, +1, +3 s: the backoff's 1 s and 2 s, not one per 1 s lease.
	if at := r.get(2).at.Sub(r.get(0).at); at != 3*time.Second {
		t.Fatalf("attempt 3 came %v after attempt 1, want 3s", at)
	}
	if g := r.get(2).p.Generation; g != 3 {
		t.Fatalf("attempt 3 carries generation %d, want 3 (issued when the backoff ended)", g)
	}
}

func TestInterruptedDeliveryResumesAfterRestart(t *testing.T) {
	h := newHarness(t, Options{AllowLoopback: true})
	status := 500
	r := newReceiver(t, h.clk, func(int) (int, string) { return status, `{"done":true}` })
	s := webhookSub("s1", "events/*", r.srv.URL, 10*time.Minute)
	h.fs.put(s)
	h.start()
	tail := h.appendTo("b", "events/a", 9)
	eventually(t, "failure 1", func() bool { return h.fs.state(s.Key).Retry.Count == 1 })
	next := h.fs.state(s.Key).Retry.NextAttemptAt

	h.clk.advance(500 * time.Millisecond)
	h.restart() // what a kill -9 leaves: the store only
	never(t, "an attempt before next_attempt_at after the restart", 100*time.Millisecond, func() bool { return r.count() > 1 })
	r.mu.Lock()
	status = 200
	r.mu.Unlock()
	h.clk.advance(next.Sub(h.clk.Now()))
	eventually(t, "the resumed attempt", func() bool { return r.count() == 2 })
	a, b := r.get(0), r.get(1)
	if string(a.body) != string(b.body) {
		t.Fatalf("the resumed attempt sent another payload:\n%s\n%s", a.body, b.body)
	}
	if b.at.Before(next) {
		t.Fatalf("resumed at %v, before next_attempt_at %v", b.at, next)
	}
	verifyWithJOSE(t, h.w.JWKS(), b.header.Get(SignatureHeader), b.body)
	eventually(t, "acked after recovery", func() bool { return h.fs.cursor(s.Key, "events/a") == tail })
	if st := h.fs.state(s.Key); st.Status != Active {
		t.Fatalf("status %s after recovery", st.Status)
	}
}

func TestPendingWorkIsDerivedAtStart(t *testing.T) {
	h := newHarness(t, Options{AllowLoopback: true})
	r := newReceiver(t, h.clk, answer(200, `{"done":true}`))
	s := webhookSub("s1", "events/**", r.srv.URL, time.Minute)
	h.fs.put(s)
	h.appendTo("b", "events/x/y", 4) // committed while the worker was down: no notification
	h.start()
	eventually(t, "delivery without a notification", func() bool { return r.count() == 1 })
}

func TestHangingReceiverDelaysOnlyItsOwnSubscription(t *testing.T) {
	h := newHarness(t, Options{AllowLoopback: true, Concurrency: 2, Timeout: 30 * time.Second})
	unblock := make(chan struct{})
	hang := newReceiver(t, h.clk, answer(200, `{"done":true}`))
	hang.hold = func(int) { <-unblock }
	defer close(unblock)
	good := newReceiver(t, h.clk, answer(200, `{"done":true}`))
	a := webhookSub("hang", "a/*", hang.srv.URL, time.Minute)
	b := webhookSub("good", "b/*", good.srv.URL, time.Minute)
	h.fs.put(a)
	h.fs.put(b)
	h.start()
	h.appendTo("b", "a/x", 1)
	eventually(t, "the hanging receiver's request", func() bool { return hang.count() == 1 })
	for i := 1; i <= 3; i++ {
		tail := h.appendTo("b", "b/x", 1)
		eventually(t, "the healthy subscription's delivery", func() bool { return h.fs.cursor(b.Key, "b/x") == tail })
	}
	h.appendTo("b", "a/x", 1)
	h.clk.advance(5 * time.Minute)
	never(t, "a second concurrent attempt for the hanging subscription", 100*time.Millisecond, func() bool { return hang.count() > 1 })
}

func TestCallbackAcksAndFences(t *testing.T) {
	h, r, s := webhookSetup(t, answer(200, `{}`), 30*time.Second)
	ctx := context.Background()
	tail, p := h.firstWake(r, 12)
	req := AckRequest{WakeID: p.WakeID, Generation: p.Generation, Acks: []AckMove{{Path: "events/a", Offset: tail}}, Done: true}

	checks := []struct {
		name   string
		bearer string
		req    AckRequest
		want   error
	}{
		{"no token", "", req, ErrTokenInvalid},
		{"garbage token", "x.y.z", req, ErrTokenInvalid},
		{"stale generation", p.CallbackToken, AckRequest{WakeID: p.WakeID, Generation: 9, Done: true}, ErrFenced},
		{"stale wake id", p.CallbackToken, AckRequest{WakeID: "w_000000000000000000000000", Generation: 1, Done: true}, ErrFenced},
		{"ack past the tail", p.CallbackToken, AckRequest{WakeID: p.WakeID, Generation: 1, Acks: []AckMove{{Path: "events/a", Offset: tail + 1}}, Done: true}, ErrAckOffset},
		{"ack of an unlinked stream", p.CallbackToken, AckRequest{WakeID: p.WakeID, Generation: 1, Acks: []AckMove{{Path: "other", Offset: 1}}}, ErrAckOffset},
	}
	for _, c := range checks {
		if _, err := h.w.Callback(ctx, s.Key, c.bearer, c.req); !errors.Is(err, c.want) {
			t.Fatalf("%s: %v, want %v", c.name, err, c.want)
		}
		if h.fs.cursor(s.Key, "events/a") != 0 || h.fs.state(s.Key).Wake == nil {
			t.Fatalf("%s moved something", c.name)
		}
	}
	if _, err := h.w.Claim(ctx, s.Key, "w1"); !errors.Is(err, ErrWrongType) {
		t.Fatalf("claim on a webhook subscription: %v", err)
	}
	// A heartbeat with a partial ack, then done.
	if rep, err := h.w.Callback(ctx, s.Key, p.CallbackToken, AckRequest{WakeID: p.WakeID, Generation: 1, Acks: []AckMove{{Path: "events/a", Offset: 5}}}); err != nil || rep.NextWake {
		t.Fatalf("heartbeat: %+v %v", rep, err)
	}
	if got := h.fs.cursor(s.Key, "events/a"); got != 5 {
		t.Fatalf("heartbeat ack: cursor %d", got)
	}
	rep, err := h.w.Callback(ctx, s.Key, p.CallbackToken, req)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := rep.MarshalJSON(); string(b) != `{"ok":true,"next_wake":false}` {
		t.Fatalf("reply %s", b)
	}
	if h.fs.cursor(s.Key, "events/a") != tail {
		t.Fatal("done did not ack")
	}
	if _, err := h.w.Callback(ctx, s.Key, p.CallbackToken, req); !errors.Is(err, ErrFenced) {
		t.Fatalf("repeated callback: %v, want FENCED", err)
	}
	never(t, "a POST without pending work", 50*time.Millisecond, func() bool { return r.count() > 1 })
}

func TestCallbackWithRemainingWorkWakesAgain(t *testing.T) {
	h, r, s := webhookSetup(t, answer(200, `{}`), 30*time.Second)
	tail, p := h.firstWake(r, 12)
	h.appendTo("b", "events/a", 1)
	rep, err := h.w.Callback(context.Background(), s.Key, p.CallbackToken, AckRequest{WakeID: p.WakeID, Generation: 1, Acks: []AckMove{{Path: "events/a", Offset: tail}}, Done: true})
	if err != nil || !rep.NextWake {
		t.Fatalf("callback: %+v %v, want next_wake", rep, err)
	}
	eventually(t, "the next wake's POST", func() bool { return r.count() == 2 })
	if g := r.get(1).p.Generation; g != 2 {
		t.Fatalf("generation %d", g)
	}
}

func TestCallbackAfterDeleteMovesNothing(t *testing.T) {
	h, r, s := webhookSetup(t, answer(200, `{}`), 30*time.Second)
	tail, p := h.firstWake(r, 12)
	h.fs.remove(s.Key) // DELETE committed; SubscriptionChanged not even called yet
	_, err := h.w.Callback(context.Background(), s.Key, p.CallbackToken, AckRequest{WakeID: p.WakeID, Generation: 1, Acks: []AckMove{{Path: "events/a", Offset: tail}}, Done: true})
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("callback after delete: %v", err)
	}
	if h.fs.cursor(s.Key, "events/a") != 0 {
		t.Fatal("a cursor moved after delete")
	}
}

func TestTokensSurviveRestart(t *testing.T) {
	h, r, s := webhookSetup(t, answer(200, `{}`), 30*time.Second)
	tail, p := h.firstWake(r, 2)
	h.restart()
	rep, err := h.w.Callback(context.Background(), s.Key, p.CallbackToken, AckRequest{WakeID: p.WakeID, Generation: 1, Acks: []AckMove{{Path: "events/a", Offset: tail}}, Done: true})
	if err != nil || rep.NextWake {
		t.Fatalf("callback with a token from before the restart: %+v %v", rep, err)
	}
}

func TestWebhookLeaseExpiryFencesAndRedelivers(t *testing.T) {
	h, r, s := webhookSetup(t, answer(200, `{}`), time.Second)
	_, p := h.firstWake(r, 2)
	h.clk.advance(time.Second)
	eventually(t, "redelivery after the lease", func() bool { return r.count() == 2 })
	if p2 := r.get(1).p; p2.Generation != 2 || p2.WakeID == p.WakeID {
		t.Fatalf("redelivery %+v", p2)
	}
	if _, err := h.w.Callback(context.Background(), s.Key, p.CallbackToken, AckRequest{WakeID: p.WakeID, Generation: 1, Done: true}); !errors.Is(err, ErrFenced) {
		t.Fatalf("callback of the lapsed wake: %v", err)
	}
}

func TestSubscriptionCreatedAfterStartAndExplicitLinks(t *testing.T) {
	h := newHarness(t, Options{AllowLoopback: true})
	r := newReceiver(t, h.clk, answer(200, `{"done":true}`))
	h.start()
	s := webhookSub("late", "", r.srv.URL, time.Minute)
	s.Streams = []string{"manual/a"}
	h.fs.put(s)
	h.w.SubscriptionChanged(s.Key)
	h.appendTo("b", "manual/b", 3) // not linked
	never(t, "a wake for an unlinked stream", 50*time.Millisecond, func() bool { return r.count() > 0 })
	tail := h.appendTo("b", "manual/a", 3)
	eventually(t, "the explicit link's delivery", func() bool { return h.fs.cursor(s.Key, "manual/a") == tail })
	if lt := r.get(0).p.Streams[0].LinkType; lt != LinkExplicit {
		t.Fatalf("link type %q", lt)
	}
}

// Stop does not wait forever for a hanging receiver; the cancelled attempt records nothing,
// and the next Start delivers the same wake again.
func TestStopAbandonsHangingAttemptsAndRestartRedelivers(t *testing.T) {
	h := newHarness(t, Options{AllowLoopback: true, Timeout: 30 * time.Second})
	unblock := make(chan struct{})
	defer close(unblock)
	r := newReceiver(t, h.clk, answer(200, `{"done":true}`))
	r.hold = func(n int) {
		if n == 1 {
			<-unblock
		}
	}
	s := webhookSub("s1", "events/*", r.srv.URL, time.Minute)
	h.fs.put(s)
	h.start()
	_, p := h.firstWake(r, 4)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	began := time.Now()
	if err := h.w.Stop(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Stop: %v", err)
	}
	if d := time.Since(began); d > 2*time.Second {
		t.Fatalf("Stop took %v", d)
	}
	h.w = nil
	if st := h.fs.state(s.Key); st.Retry.Count != 0 || st.Wake == nil || st.Wake.ID != p.WakeID {
		t.Fatalf("state after an abandoned attempt: %+v", st)
	}
	h.start()
	eventually(t, "the redelivery", func() bool { return r.count() == 2 })
	if p2 := r.get(1).p; p2.WakeID != p.WakeID || p2.Generation != p.Generation {
		t.Fatalf("redelivered %+v, want the wake %s", p2, p.WakeID)
	}
	eventually(t, "the ack", func() bool { return h.fs.state(s.Key).Wake == nil })
}

// A subscription deleted and re-created under the same id is a new incarnation; the old
// wake's token is fenced and moves nothing, while generations continue.
func TestRecreatedSubscriptionFencesOldTokens(t *testing.T) {
	h, r, s := webhookSetup(t, answer(200, `{}`), 30*time.Second)
	tail, p := h.firstWake(r, 5)
	again := s
	again.Incarnation = s.Incarnation + 1
	again.State = State{Generation: h.fs.state(s.Key).Generation} // the engine continues the generation
	h.fs.remove(s.Key)
	h.fs.put(again)
	h.w.SubscriptionChanged(s.Key)
	eventually(t, "the new incarnation's wake", func() bool { return r.count() == 2 })
	p2 := r.get(1).p
	if p2.Generation != p.Generation+1 || p2.CallbackToken == p.CallbackToken {
		t.Fatalf("new incarnation's wake %+v after %+v", p2, p)
	}
	req := AckRequest{WakeID: p.WakeID, Generation: p.Generation, Acks: []AckMove{{Path: "events/a", Offset: tail}}, Done: true}
	if _, err := h.w.Callback(context.Background(), s.Key, p.CallbackToken, req); !errors.Is(err, ErrFenced) {
		t.Fatalf("old incarnation's callback: %v", err)
	}
	// The old token names the new wake's generation and id: still fenced, by incarnation.
	forged := req
	forged.WakeID, forged.Generation = p2.WakeID, p2.Generation
	old := mintToken(h.w.tokenKey(), tokenClaims{Sub: tokenSubject(s.Key), Inc: s.Incarnation, Gen: p2.Generation, Wid: p2.WakeID, Kind: kindCallback, Exp: h.clk.Now().Add(time.Hour).Unix()})
	if _, err := h.w.Callback(context.Background(), s.Key, old, forged); !errors.Is(err, ErrFenced) {
		t.Fatalf("a token of the old incarnation: %v", err)
	}
	if h.fs.cursor(s.Key, "events/a") != 0 {
		t.Fatal("a fenced callback moved a cursor")
	}
}
