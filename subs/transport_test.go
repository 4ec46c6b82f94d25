package subs

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
)

// dialLog records every address the dial guard let through to connect(2).
type dialLog struct {
	mu    sync.Mutex
	addrs []netip.AddrPort
}

func (d *dialLog) record(a netip.AddrPort) {
	d.mu.Lock()
	d.addrs = append(d.addrs, a)
	d.mu.Unlock()
}

func (d *dialLog) forbidden(loopbackOK bool) []netip.AddrPort {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []netip.AddrPort
	for _, a := range d.addrs {
		if deniedAddr(a.Addr(), loopbackOK) != "" {
			out = append(out, a)
		}
	}
	return out
}

// A name that resolves to a private or loopback address passes the static check at PUT
// (no DNS there) and must fail at dial time with no connection made.
func TestDialGuardRefusesRebindingNames(t *testing.T) {
	r := newReceiver(t, newFakeClock(), answer(200, `{"done":true}`))
	port := r.srv.URL[strings.LastIndex(r.srv.URL, ":")+1:]
	resolve := func(_ context.Context, host string) ([]netip.Addr, error) {
		switch host {
		case "rebind.example":
			return []netip.Addr{netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("127.0.0.1")}, nil
		case "meta.example":
			return []netip.Addr{netip.MustParseAddr("169.254.169.254")}, nil
		}
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	for _, u := range []string{"https://rebind.example:" + port + "/x", "https://meta.example:" + port + "/x"} {
		if err := CheckWebhookURL(u, false); err != nil {
			t.Fatalf("%s refused statically: %v (the test needs it accepted)", u, err)
		}
	}
	// AllowLoopback is on: even so, a name that is not a development host never reaches
	// loopback.
	var log dialLog
	h := newHarness(t, Options{AllowLoopback: true, Resolve: resolve, onConnect: log.record})
	h.fs.put(webhookSub("rebind", "r/*", "http://rebind.example:"+port+"/x", time.Minute))
	h.fs.put(webhookSub("meta", "m/*", "https://meta.example:"+port+"/x", time.Minute))
	h.start()
	h.appendTo("b", "r/a", 1)
	h.appendTo("b", "m/a", 1)
	for _, id := range []string{"rebind", "meta"} {
		k := Key{Bucket: "b", ID: id}
		eventually(t, id+" failing", func() bool { return h.fs.state(k).Retry.Count == 1 })
		if le := h.fs.state(k).Retry.LastError; !strings.Contains(le, errDialDenied.Error()) {
			t.Errorf("%s: last error %q", id, le)
		}
	}
	if f := log.forbidden(false); len(f) != 0 {
		t.Fatalf("dialled forbidden addresses: %v", f)
	}
	if len(log.addrs) != 0 {
		t.Fatalf("the guard let %v through", log.addrs)
	}
	if n := r.connCount(); n != 0 {
		t.Fatalf("the loopback receiver saw %d connections", n)
	}
}

func TestRedirectsAreNotFollowed(t *testing.T) {
	clk := newFakeClock()
	target := newReceiver(t, clk, answer(200, `{"done":true}`))
	bounce := newReceiver(t, clk, answer(200, ""))
	bounce.srv.Config.Handler = http.RedirectHandler(target.srv.URL+"/x", http.StatusFound)
	h := newHarness(t, Options{AllowLoopback: true})
	s := webhookSub("s", "e/*", bounce.srv.URL+"/x", time.Minute)
	h.fs.put(s)
	h.start()
	h.appendTo("b", "e/a", 1)
	eventually(t, "the 302 counted as a failure", func() bool { return h.fs.state(s.Key).Retry.Count == 1 })
	if target.count() != 0 || target.connCount() != 0 {
		t.Fatalf("the redirect target got %d requests", target.count())
	}
}

func TestProxyFromEnvironmentIsIgnored(t *testing.T) {
	t.Setenv("HTTPS_PROXY", "http://10.0.0.1:3128")
	t.Setenv("HTTP_PROXY", "http://10.0.0.1:3128")
	c := newClient(&guard{resolve: defaultResolve}, time.Second)
	if tr := c.Transport.(*http.Transport); tr.Proxy != nil {
		t.Fatal("the webhook transport consults a proxy")
	}
}

// A loopback URL stored under the development exception is dialled only while the worker
// runs with it (the flag may be turned off before a restart). The allowed case shows that
// the counting hook is live, so the zero counts can fail.
func TestDialGuardLoopbackOnlyWithTheException(t *testing.T) {
	for _, allow := range []bool{false, true} {
		r := newReceiver(t, newFakeClock(), answer(200, `{"done":true}`))
		var log dialLog
		h := newHarness(t, Options{AllowLoopback: allow, onConnect: log.record})
		s := webhookSub("s", "e/*", r.srv.URL+"/x", time.Minute)
		h.fs.put(s)
		h.start()
		tail := h.appendTo("b", "e/a", 1)
		if !allow {
			eventually(t, "the attempt failing", func() bool { return h.fs.state(s.Key).Retry.Count == 1 })
			if f := log.forbidden(false); len(f) != 0 || r.connCount() != 0 {
				t.Fatalf("dialled %v; receiver connections %d", f, r.connCount())
			}
			continue
		}
		eventually(t, "the delivery", func() bool { return h.fs.cursor(s.Key, "e/a") == tail })
		log.mu.Lock()
		if len(log.addrs) == 0 || !log.addrs[0].Addr().IsLoopback() {
			t.Fatalf("connects %v", log.addrs)
		}
		log.mu.Unlock()
	}
}
