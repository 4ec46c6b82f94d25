package linearizability

import (
	"context"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/httpd"
	"github.com/dsd-project/dsd/model"
	"github.com/dsd-project/dsd/subs"
)

// subsServer is dsd's HTTP layer with the delivery worker over a fresh engine.
func subsServer(t *testing.T) string {
	eng, err := engine.Open(t.TempDir(), engine.Options{NoSync: true, SweepInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.CreateBucket("default"); err != nil {
		t.Fatal(err)
	}
	w, err := subs.New(subs.Options{Store: eng})
	if err != nil {
		t.Fatal(err)
	}
	eng.SetStreamObserver(w.StreamChanged)
	if err := w.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(httpd.New(httpd.EngineStore{Engine: eng},
		httpd.Config{CompatBucket: "default", Subscriptions: w}))
	t.Cleanup(func() {
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = w.Stop(ctx)
		eng.Close()
	})
	return srv.URL
}

func mustStatus(t *testing.T, method, u, ct, body string, want int) {
	t.Helper()
	req, _ := http.NewRequest(method, u, strings.NewReader(body))
	req.Header.Set("Content-Type", ct)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != want {
		t.Fatalf("%s %s: %v %v, want %d", method, u, resp, err, want)
	}
	resp.Body.Close()
}

// recordSubs runs workers concurrent clients for ops operations each against one
// pull-wake subscription: appends, claims, acks (heartbeat and done, current and stale)
// and releases.
func recordSubs(t *testing.T, base string, workers, ops int, seed uint64) []porcupine.Operation {
	mustStatus(t, "PUT", base+"/v1/stream/lin/wake", "application/json", "[]", 201)
	mustStatus(t, "PUT", base+"/v1/stream/lin/data", "text/plain", "", 201)
	mustStatus(t, "PUT", base+"/v1/stream/__ds/subscriptions/lin", "application/json",
		`{"type":"pull-wake","streams":["lin/data"],"wake_stream":"lin/wake","lease_ttl_ms":600000}`, 201)
	var mu sync.Mutex
	var hist []porcupine.Operation
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			rnd := rand.New(rand.NewPCG(seed, uint64(w)))
			c := &SubClient{Base: base, Stream: "lin/data", ID: "lin", HTTP: &http.Client{Timeout: 10 * time.Second}}
			me := "w" + string(rune('a'+w))
			var token string
			var fence model.Fence
			var seenTail uint64
			for range ops {
				in := SubOp{Worker: me, Fence: fence, NoToken: token == ""}
				var out SubResult
				var err error
				call := time.Now().UnixNano()
				switch r := rnd.IntN(100); {
				case r < 25:
					n := 1 + rnd.IntN(3)
					in = SubOp{Kind: "append", Offset: uint64(n)}
					out, err = c.Append(strings.Repeat("x", n))
				case r < 55:
					in.Kind = "claim"
					var tok string
					out, tok, err = c.Claim(me)
					if out.Status == 200 {
						token, seenTail = tok, out.Tail
						fence = model.Fence{TokenGen: out.Gen, TokenWake: out.WakeID, Gen: out.Gen, WakeID: out.WakeID, Claim: true}
					}
				case r < 85:
					in.Kind, in.Done = "ack", rnd.IntN(2) == 0
					in.Offset = seenTail
					if rnd.IntN(4) == 0 && seenTail > 0 {
						in.Offset = seenTail - 1
					}
					out, err = c.Ack(token, fence, in.Offset, in.Done)
				default:
					in.Kind = "release"
					out, err = c.Release(token, fence)
				}
				ret := time.Now().UnixNano()
				if err != nil {
					t.Errorf("%s %s: %v", me, in.Kind, err)
					return
				}
				mu.Lock()
				hist = append(hist, porcupine.Operation{ClientId: w, Input: in, Call: call, Output: out, Return: ret})
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return hist
}

// Concurrent workers against dsd's pull-wake lease linearize to model.SubMachine: one
// holder at a time, growing generations, fenced stale acks and releases, monotonic
// cursors, claims that see completed appends. Spec: B-7-01, B-7-05, B-7-06 (base protocol
// §7.2-§7.3), D10.
func TestSubscriptionLeaseLinearizable(t *testing.T) {
	base := subsServer(t)
	hist := recordSubs(t, base, 4, 150, 1)
	if res := porcupine.CheckOperationsTimeout(SubModel, hist, 30*time.Second); res != porcupine.Ok {
		t.Fatalf("subscription history of %d operations is not linearizable (%v)", len(hist), res)
	}
	var claims, fenced int
	for _, op := range hist {
		in, out := op.Input.(SubOp), op.Output.(SubResult)
		if in.Kind == "claim" && out.Status == 200 {
			claims++
		}
		if out.Code == "FENCED" {
			fenced++
		}
	}
	if claims < 3 || fenced == 0 {
		t.Fatalf("a weak workload: %d successful claims, %d fenced calls", claims, fenced)
	}
}

// The model rejects the bugs it exists for: two holders at once, an accepted stale ack,
// a generation that does not grow, a claim that misses a completed append.
func TestSubModelRejectsBugs(t *testing.T) {
	claim := func(w string, gen uint64, wake string, tail uint64) (SubOp, SubResult) {
		return SubOp{Kind: "claim", Worker: w}, SubResult{Status: 200, Gen: gen, WakeID: wake, Tail: tail}
	}
	seq := func(pairs ...any) []porcupine.Operation {
		var ops []porcupine.Operation
		for i := 0; i < len(pairs); i += 2 {
			ops = append(ops, porcupine.Operation{ClientId: 0, Input: pairs[i], Output: pairs[i+1],
				Call: int64(10 * i), Return: int64(10*i + 5)})
		}
		return ops
	}
	app := SubOp{Kind: "append", Offset: 3}
	appOut := SubResult{Status: 204, Tail: 3}
	c1, r1 := claim("wa", 1, "w_1", 3)
	c2, r2 := claim("wb", 2, "w_2", 3)
	f1 := model.Fence{TokenGen: 1, TokenWake: "w_1", Gen: 1, WakeID: "w_1", Claim: true}
	ackDone := SubOp{Kind: "ack", Worker: "wa", Fence: f1, Offset: 3, Done: true}
	okAck := SubResult{Status: 200}
	c3, r3 := claim("wb", 1, "w_2", 3)
	cases := map[string][]porcupine.Operation{
		"two holders":        seq(app, appOut, c1, r1, c2, r2),
		"stale ack accepted": seq(app, appOut, c1, r1, ackDone, okAck, ackDone, okAck),
		"generation reused":  seq(app, appOut, c1, r1, SubOp{Kind: "release", Worker: "wa", Fence: f1}, SubResult{Status: 204}, c3, r3),
		"missed append":      seq(app, appOut, SubOp{Kind: "claim", Worker: "wa"}, SubResult{Status: 409, Code: "NO_PENDING_WORK"}),
		"generation skipped": seq(app, appOut, c2, r2),
		"next_wake lost": seq(app, appOut, c1, r1, SubOp{Kind: "ack", Worker: "wa", Fence: f1, Offset: 2, Done: true},
			SubResult{Status: 200, NextWake: false}),
	}
	for name, ops := range cases {
		if porcupine.CheckOperations(SubModel, ops) {
			t.Errorf("%s: accepted", name)
		}
	}
	if !porcupine.CheckOperations(SubModel, seq(app, appOut, c1, r1, ackDone, okAck)) {
		t.Error("a correct history was rejected")
	}
	c4, r4 := claim("wb", 2, "w_2", 3) // the wake the release issued on its own
	if !porcupine.CheckOperations(SubModel, seq(app, appOut, c1, r1, SubOp{Kind: "release", Worker: "wa", Fence: f1}, SubResult{Status: 204}, c4, r4)) {
		t.Error("a claim of the wake a release issued was rejected")
	}
}
