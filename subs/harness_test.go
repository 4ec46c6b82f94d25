package subs

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/dsd-project/dsd/model"
)

// harness runs a Worker on a fakeStore and a fakeClock; restart makes a new Worker on the
// same store (what a kill -9 leaves behind is exactly the store's content).
type harness struct {
	t    *testing.T
	fs   *fakeStore
	clk  *fakeClock
	w    *Worker
	opts Options
}

func newHarness(t *testing.T, opts Options) *harness {
	h := &harness{t: t, fs: newFakeStore(), clk: newFakeClock(), opts: opts}
	t.Cleanup(func() { h.stop() })
	return h
}

func (h *harness) start() *Worker {
	h.t.Helper()
	o := h.opts
	o.Store, o.Clock = h.fs, h.clk
	if o.Jitter == nil {
		o.Jitter = func() float64 { return 0.5 } // no jitter: exact 1, 2, 4 ... s
	}
	if o.Timeout == 0 {
		o.Timeout = 5 * time.Second
	}
	w, err := New(o)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := w.Start(context.Background()); err != nil {
		h.t.Fatal(err)
	}
	h.w = w
	return w
}

func (h *harness) stop() {
	if h.w != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = h.w.Stop(ctx)
		cancel()
		h.w = nil
	}
}

func (h *harness) restart() *Worker {
	h.stop()
	return h.start()
}

// appendTo grows a stream by n bytes (creating it) and notifies the worker.
func (h *harness) appendTo(bucket, path string, n int) model.Offset {
	t := h.fs.tail(bucket, path) + model.Offset(n)
	h.fs.setTail(bucket, path, t)
	if h.w != nil {
		h.w.StreamChanged(bucket, path)
	}
	return t
}

type received struct {
	header http.Header
	body   []byte
	p      webhookPayload
	at     time.Time // fake-clock time when it arrived
}

// receiver is a webhook receiver on 127.0.0.1 that records every POST and answers with
// reply (status and body), optionally waiting on hold first.
type receiver struct {
	srv   *httptest.Server
	clk   *fakeClock
	mu    sync.Mutex
	reqs  []received
	conns int
	reply func(n int) (int, string) // n: 1-based request number
	hold  func(n int)
}

func newReceiver(t *testing.T, clk *fakeClock, reply func(n int) (int, string)) *receiver {
	r := &receiver{clk: clk, reply: reply}
	r.srv = httptest.NewUnstartedServer(http.HandlerFunc(r.serve))
	r.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			r.mu.Lock()
			r.conns++
			r.mu.Unlock()
		}
	}
	r.srv.Start()
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	var p webhookPayload
	_ = json.Unmarshal(body, &p)
	r.mu.Lock()
	r.reqs = append(r.reqs, received{header: req.Header.Clone(), body: body, p: p, at: r.clk.Now()})
	n := len(r.reqs)
	hold := r.hold
	r.mu.Unlock()
	if hold != nil {
		hold(n)
	}
	status, text := r.reply(n)
	w.WriteHeader(status)
	_, _ = io.WriteString(w, text)
}

func (r *receiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.reqs)
}

func (r *receiver) connCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.conns
}

func (r *receiver) get(i int) received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reqs[i]
}

func answer(status int, body string) func(int) (int, string) {
	return func(int) (int, string) { return status, body }
}

func webhookSub(id, pattern, url string, lease time.Duration) Subscription {
	return Subscription{
		Key: Key{Bucket: "b", ID: id}, Incarnation: 42, Type: Webhook, Pattern: pattern,
		WebhookURL: url, LeaseTTL: lease, CallbackURL: "http://dsd.test/v1/stream/__ds/subscriptions/" + id + "/callback",
	}
}

func pullSub(id, pattern, wakeStream string, lease time.Duration) Subscription {
	return Subscription{
		Key: Key{Bucket: "b", ID: id}, Incarnation: 43, Type: PullWake, Pattern: pattern,
		WakeStream: wakeStream, LeaseTTL: lease,
	}
}

// webhookSetup starts a worker (development exception on) with one webhook subscription
// "s1" on pattern events/* whose receiver answers reply.
func webhookSetup(t *testing.T, reply func(int) (int, string), lease time.Duration) (*harness, *receiver, Subscription) {
	h := newHarness(t, Options{AllowLoopback: true})
	r := newReceiver(t, h.clk, reply)
	s := webhookSub("s1", "events/*", r.srv.URL, lease)
	h.fs.put(s)
	h.start()
	return h, r, s
}

// firstWake appends n bytes to events/a and waits for the first POST.
func (h *harness) firstWake(r *receiver, n int) (model.Offset, webhookPayload) {
	tail := h.appendTo("b", "events/a", n)
	eventually(h.t, "the wake", func() bool { return r.count() >= 1 })
	return tail, r.get(0).p
}

// pullSetup starts a worker with one pull-wake subscription "p1" on events/* whose wake
// stream wake/pool exists.
func pullSetup(t *testing.T, lease time.Duration) (*harness, Subscription) {
	h := newHarness(t, Options{})
	h.fs.setTail("b", "wake/pool", 0)
	s := pullSub("p1", "events/*", "wake/pool", lease)
	h.fs.put(s)
	h.start()
	return h, s
}
