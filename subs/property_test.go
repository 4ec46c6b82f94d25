package subs

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/dsd-project/dsd/model"
)

// TestPullWakeRandomOperations drives random appends, claims, heartbeats, acks, releases,
// stale-token replays, lease expiries and restarts, and checks after every step:
// generations and cursors never go back; only the current claim's token is accepted (every
// older one is fenced); wake events carry strictly increasing generations, none beyond the
// state's; and at the end, once everything is acked, nothing is pending or outstanding.
func TestPullWakeRandomOperations(t *testing.T) {
	for seed := range uint64(12) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runPullWakeOps(t, seed) })
	}
}

type heldClaim struct {
	c     ClaimReply
	valid bool // still the current claim as far as the driver knows
}

func runPullWakeOps(t *testing.T, seed uint64) {
	rnd := rand.New(rand.NewPCG(seed, 99))
	h := newHarness(t, Options{})
	ctx := context.Background()
	h.fs.setTail("b", "wake/q", 0)
	s := pullSub("p", "s/*", "wake/q", time.Second)
	h.fs.put(s)
	h.start()
	paths := []string{"s/a", "s/b", "s/c"}
	var claims []heldClaim
	var lastGen uint64
	lastCursor := map[string]model.Offset{}

	check := func(op string) {
		t.Helper()
		events := decodeEvents(t, h.fs.wakeEvents("b", "wake/q")) // before the state: a wake may be issued meanwhile
		st := h.fs.state(s.Key)
		if st.Generation < lastGen {
			t.Fatalf("%s: generation went back %d → %d", op, lastGen, st.Generation)
		}
		lastGen = st.Generation
		for _, p := range paths {
			c := h.fs.cursor(s.Key, p)
			if c < lastCursor[p] || c > h.fs.tail("b", p) {
				t.Fatalf("%s: cursor of %s %d (was %d, tail %d)", op, p, c, lastCursor[p], h.fs.tail("b", p))
			}
			lastCursor[p] = c
		}
		var prev uint64
		for _, ev := range events {
			if ev.Generation <= prev || ev.Generation > st.Generation {
				t.Fatalf("%s: event generation %d after %d (state %d)", op, ev.Generation, prev, st.Generation)
			}
			prev = ev.Generation
		}
	}
	current := func() *heldClaim {
		for i := range claims {
			if claims[i].valid {
				return &claims[i]
			}
		}
		return nil
	}
	invalidate := func() {
		for i := range claims {
			claims[i].valid = false
		}
	}

	for i := range 80 {
		var op string
		switch r := rnd.IntN(9); {
		case r <= 1:
			p := paths[rnd.IntN(len(paths))]
			op = "append " + p
			h.appendTo("b", p, 1+rnd.IntN(5))
		case r == 2:
			op = "claim"
			c, err := h.w.Claim(ctx, s.Key, fmt.Sprint("w", rnd.IntN(3)))
			var ce *ClaimedError
			switch {
			case err == nil:
				if cur := current(); cur != nil {
					t.Fatalf("claim succeeded while %s was held", cur.c.WakeID)
				}
				if c.Generation != h.fs.state(s.Key).Generation {
					t.Fatalf("claimed generation %d, state %d", c.Generation, h.fs.state(s.Key).Generation)
				}
				claims = append(claims, heldClaim{c, true})
			case errors.As(err, &ce):
				if current() == nil {
					t.Fatalf("ALREADY_CLAIMED (%s) with no live claim", ce.Holder)
				}
			case errors.Is(err, ErrNoPendingWork):
			default:
				t.Fatalf("claim: %v", err)
			}
		case r == 3 || r == 4:
			cur := current()
			if cur == nil {
				continue
			}
			done := r == 4
			op = fmt.Sprintf("ack done=%v", done)
			var acks []AckMove
			for _, si := range cur.c.Streams {
				lo := max(si.Acked, lastCursor[si.Path]) // a consumer's acks only grow
				if lo <= si.Tail && rnd.IntN(2) == 0 {
					acks = append(acks, AckMove{Path: si.Path, Offset: lo + model.Offset(rnd.IntN(int(si.Tail-lo)+1))})
				}
			}
			_, err := h.w.Ack(ctx, s.Key, cur.c.Token, AckRequest{WakeID: cur.c.WakeID, Generation: cur.c.Generation, Acks: acks, Done: done})
			if err != nil {
				t.Fatalf("ack of the live claim: %v", err)
			}
			if done {
				invalidate()
			}
		case r == 5:
			cur := current()
			if cur == nil {
				continue
			}
			op = "release"
			if err := h.w.Release(ctx, s.Key, cur.c.Token, ReleaseRequest{WakeID: cur.c.WakeID, Generation: cur.c.Generation}); err != nil {
				t.Fatalf("release of the live claim: %v", err)
			}
			invalidate()
		case r == 6:
			if len(claims) == 0 {
				continue
			}
			old := claims[rnd.IntN(len(claims))]
			if old.valid {
				continue
			}
			op = "stale ack"
			if _, err := h.w.Ack(ctx, s.Key, old.c.Token, AckRequest{WakeID: old.c.WakeID, Generation: old.c.Generation, Done: true}); !errors.Is(err, ErrFenced) {
				t.Fatalf("stale ack of generation %d: %v, want FENCED", old.c.Generation, err)
			}
		case r == 7:
			op = "lease expiry"
			h.clk.advance(1100 * time.Millisecond)
			invalidate()
			eventually(t, "the lapsed lease cleared", func() bool {
				st := h.fs.state(s.Key)
				return st.Wake == nil || st.Wake.Holder == ""
			})
		case r == 8:
			op = "restart"
			h.restart()
		}
		check(fmt.Sprintf("op %d (%s)", i, op))
	}

	// Drain: claim and ack everything until nothing is pending.
	h.clk.advance(2 * time.Second)
	invalidate()
	for range 20 {
		c, err := h.w.Claim(ctx, s.Key, "drain")
		if errors.Is(err, ErrNoPendingWork) {
			break
		}
		if err != nil {
			t.Fatalf("drain claim: %v", err)
		}
		var acks []AckMove
		for _, si := range c.Streams {
			acks = append(acks, AckMove{Path: si.Path, Offset: si.Tail})
		}
		if _, err := h.w.Ack(ctx, s.Key, c.Token, AckRequest{WakeID: c.WakeID, Generation: c.Generation, Acks: acks, Done: true}); err != nil {
			t.Fatalf("drain ack: %v", err)
		}
	}
	for _, p := range paths {
		if h.fs.cursor(s.Key, p) != h.fs.tail("b", p) {
			t.Fatalf("%s not fully acked: %d of %d", p, h.fs.cursor(s.Key, p), h.fs.tail("b", p))
		}
	}
	eventually(t, "no outstanding wake", func() bool { return h.fs.state(s.Key).Wake == nil })
}
