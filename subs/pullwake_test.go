package subs

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"
)

type wakeEvent struct {
	Type           string `json:"type"`
	SubscriptionID string `json:"subscription_id"`
	Stream         string `json:"stream"`
	Generation     uint64 `json:"generation"`
	TS             int64  `json:"ts"`
}

func decodeEvents(t *testing.T, raw [][]byte) []wakeEvent {
	t.Helper()
	out := make([]wakeEvent, len(raw))
	for i, b := range raw {
		if err := json.Unmarshal(b, &out[i]); err != nil {
			t.Fatalf("event %s: %v", b, err)
		}
	}
	return out
}

func TestPullWakeClaimAckRelease(t *testing.T) {
	h, s := pullSetup(t, time.Second)
	ctx := context.Background()
	if _, err := h.w.Claim(ctx, s.Key, "worker-1"); !errors.Is(err, ErrNoPendingWork) {
		t.Fatalf("claim with nothing pending: %v", err)
	}
	tail := h.appendTo("b", "events/p", 8)
	eventually(t, "a wake event", func() bool { return len(h.fs.wakeEvents("b", "wake/pool")) == 1 })
	ev := decodeEvents(t, h.fs.wakeEvents("b", "wake/pool"))[0]
	if ev.Type != "wake" || ev.SubscriptionID != "p1" || ev.Stream != "events/p" || ev.Generation != 1 || ev.TS != h.clk.Now().UnixMilli() {
		t.Fatalf("event %+v", ev)
	}

	c, err := h.w.Claim(ctx, s.Key, "worker-1")
	if err != nil {
		t.Fatal(err)
	}
	if c.Generation != 1 || !wakeIDRE.MatchString(c.WakeID) || c.Token == "" || len(c.Streams) != 1 || c.Streams[0].Tail != tail || c.LeaseTTL != time.Second {
		t.Fatalf("claim %+v", c)
	}
	var doc map[string]any
	b, _ := json.Marshal(c)
	_ = json.Unmarshal(b, &doc)
	if doc["lease_ttl_ms"] != float64(1000) || doc["token"] != c.Token {
		t.Fatalf("claim document %s", b)
	}
	_, err = h.w.Claim(ctx, s.Key, "worker-2")
	var ce *ClaimedError
	if !errors.As(err, &ce) || ce.Holder != "worker-1" || ce.Generation != 1 || !errors.Is(err, ErrAlreadyClaimed) {
		t.Fatalf("second claim: %v", err)
	}
	if _, err := h.w.Callback(ctx, s.Key, c.Token, AckRequest{WakeID: c.WakeID, Generation: 1}); !errors.Is(err, ErrWrongType) {
		t.Fatalf("callback on pull-wake: %v", err)
	}
	rep, err := h.w.Ack(ctx, s.Key, c.Token, AckRequest{WakeID: c.WakeID, Generation: 1, Acks: []AckMove{{Path: "events/p", Offset: tail}}, Done: true})
	if err != nil || rep.NextWake {
		t.Fatalf("ack done: %+v %v", rep, err)
	}
	if h.fs.cursor(s.Key, "events/p") != tail {
		t.Fatal("ack did not move the cursor")
	}
	if _, err := h.w.Ack(ctx, s.Key, c.Token, AckRequest{WakeID: c.WakeID, Generation: 1, Done: true}); !errors.Is(err, ErrFenced) {
		t.Fatalf("repeated ack: %v", err)
	}

	// An append and an immediate claim: the claim sees the pending work itself.
	tail2 := h.appendTo("b", "events/p", 4)
	c2, err := h.w.Claim(ctx, s.Key, "worker-2")
	if err != nil {
		t.Fatalf("immediate claim: %v", err)
	}
	if c2.Generation != 2 || c2.Streams[0].Acked != tail || c2.Streams[0].Tail != tail2 {
		t.Fatalf("claim 2 %+v", c2)
	}
	if err := h.w.Release(ctx, s.Key, c.Token, ReleaseRequest{WakeID: c2.WakeID, Generation: 2}); !errors.Is(err, ErrFenced) {
		t.Fatalf("release with the old claim's token: %v", err)
	}
	before := len(h.fs.wakeEvents("b", "wake/pool"))
	if err := h.w.Release(ctx, s.Key, c2.Token, ReleaseRequest{WakeID: c2.WakeID, Generation: 2}); err != nil {
		t.Fatal(err)
	}
	if h.fs.cursor(s.Key, "events/p") != tail {
		t.Fatal("release acked")
	}
	evs := decodeEvents(t, h.fs.wakeEvents("b", "wake/pool"))
	if len(evs) != before+1 || evs[len(evs)-1].Generation != 3 {
		t.Fatalf("release with pending work wrote %d events (last %+v), want one for generation 3", len(evs)-before, evs[len(evs)-1])
	}
	if st := h.fs.state(s.Key); st.Wake == nil || st.Wake.Holder != "" || st.Generation != 3 {
		t.Fatalf("state after release %+v", st)
	}
}

func TestPullWakeLeaseHeartbeatAndExpiry(t *testing.T) {
	h, s := pullSetup(t, time.Second)
	ctx := context.Background()
	c := h.claimAfterAppend(s, "w1")
	hb := AckRequest{WakeID: c.WakeID, Generation: c.Generation}
	for range 3 { // each heartbeat gives a full lease again
		h.clk.advance(800 * time.Millisecond)
		if _, err := h.w.Ack(ctx, s.Key, c.Token, hb); err != nil {
			t.Fatalf("heartbeat within the lease: %v", err)
		}
	}
	events := len(h.fs.wakeEvents("b", "wake/pool"))
	h.clk.advance(time.Second)
	eventually(t, "a new wake after the lease lapsed", func() bool { return len(h.fs.wakeEvents("b", "wake/pool")) == events+1 })
	if _, err := h.w.Ack(ctx, s.Key, c.Token, hb); !errors.Is(err, ErrFenced) {
		t.Fatalf("heartbeat after expiry: %v", err)
	}
	evs := decodeEvents(t, h.fs.wakeEvents("b", "wake/pool"))
	if g := evs[len(evs)-1].Generation; g != c.Generation+1 {
		t.Fatalf("re-wake generation %d, want %d", g, c.Generation+1)
	}
	c2, err := h.w.Claim(ctx, s.Key, "w2")
	if err != nil || c2.Generation != c.Generation+1 {
		t.Fatalf("claim after expiry: %+v %v", c2, err)
	}
}

func TestMissingWakeStreamFailsAndRetriesWithBackoff(t *testing.T) {
	h := newHarness(t, Options{})
	s := pullSub("p1", "events/*", "wake/none", time.Second)
	h.fs.put(s)
	h.start()
	h.appendTo("b", "events/p", 8)
	eventually(t, "a failed wake", func() bool { return h.fs.state(s.Key).Retry.Count == 1 })
	st := h.fs.state(s.Key)
	if st.Status != Failed || st.Wake != nil || st.Generation != 0 || !st.Retry.NextAttemptAt.Equal(h.clk.Now().Add(time.Second)) {
		t.Fatalf("state %+v", st)
	}
	if _, err := h.w.Claim(context.Background(), s.Key, "w1"); !errors.Is(err, ErrWakeStream) {
		t.Fatalf("claim without a wake stream: %v", err)
	}
	if st := h.fs.state(s.Key); st.Wake != nil || st.Generation != 0 {
		t.Fatalf("a wake was issued without its event: %+v", st)
	}
	h.clk.advance(2 * time.Second) // past the claim's own failure (count 2: 2 s)
	eventually(t, "the scheduler's retry failing too", func() bool { return h.fs.state(s.Key).Retry.Count == 3 })
	h.fs.setTail("b", "wake/none", 0)               // the application creates it
	h.clk.advance(4*time.Second - time.Millisecond) // backoff after failure 3: 4 s
	never(t, "an event before the backoff", 60*time.Millisecond, func() bool { return len(h.fs.wakeEvents("b", "wake/none")) > 0 })
	h.clk.advance(time.Millisecond)
	eventually(t, "the event after the backoff", func() bool { return len(h.fs.wakeEvents("b", "wake/none")) == 1 })
	if st := h.fs.state(s.Key); st.Status != Active || st.Retry.Count != 0 || st.Generation != 1 {
		t.Fatalf("state after recovery %+v", st)
	}
}

func TestClaimLeaseRestartsInFullAfterRestart(t *testing.T) {
	h, s := pullSetup(t, time.Second)
	ctx := context.Background()
	c := h.claimAfterAppend(s, "w1")
	h.clk.advance(900 * time.Millisecond)
	h.restart()
	h.clk.advance(900 * time.Millisecond) // 1.8 s after the claim, 0.9 s after the restart
	if _, err := h.w.Ack(ctx, s.Key, c.Token, AckRequest{WakeID: c.WakeID, Generation: c.Generation, Done: true}); err != nil {
		t.Fatalf("ack within the restarted lease: %v", err)
	}
}

// claimAfterAppend appends to events/p and claims for worker.
func (h *harness) claimAfterAppend(s Subscription, worker string) ClaimReply {
	h.t.Helper()
	h.appendTo("b", "events/p", 8)
	c, err := h.w.Claim(context.Background(), s.Key, worker)
	if err != nil {
		h.t.Fatal(err)
	}
	return c
}
