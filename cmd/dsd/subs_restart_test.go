package main

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// hookCall is one webhook delivery as the receiver saw it.
type hookCall struct {
	at   time.Time
	sig  string
	body []byte
	wake struct {
		WakeID     string `json:"wake_id"`
		Generation uint64 `json:"generation"`
	}
}

// hookReceiver answers the first `fail` deliveries 500 and the rest {"done":true}.
type hookReceiver struct {
	mu    sync.Mutex
	calls []hookCall
	fail  int
	srv   *httptest.Server
}

func newHookReceiver(t *testing.T, fail int) *hookReceiver {
	h := &hookReceiver{fail: fail}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		c := hookCall{at: time.Now(), sig: r.Header.Get("Webhook-Signature"), body: b}
		_ = json.Unmarshal(b, &c.wake)
		h.mu.Lock()
		h.calls = append(h.calls, c)
		n := len(h.calls)
		h.mu.Unlock()
		if n <= h.fail {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		io.WriteString(w, `{"done":true}`)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// wait returns the n-th call (1-based) once it arrived, failing after d.
func (h *hookReceiver) wait(t *testing.T, n int, d time.Duration) hookCall {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		h.mu.Lock()
		if len(h.calls) >= n {
			c := h.calls[n-1]
			h.mu.Unlock()
			return c
		}
		h.mu.Unlock()
	}
	t.Fatalf("webhook call %d did not arrive within %v", n, d)
	return hookCall{}
}

func mustDo(t *testing.T, method, u, ct, body string, hdr map[string]string, want int) []byte {
	t.Helper()
	resp, err := do(method, u, ct, []byte(body), hdr)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: %d %s, want %d", method, u, resp.StatusCode, b, want)
	}
	return b
}

// verifies checks a Webhook-Signature against a JWKS.
func verifies(t *testing.T, c hookCall, jwks []byte) {
	t.Helper()
	parts := map[string]string{}
	for _, p := range strings.Split(c.sig, ",") {
		k, v, _ := strings.Cut(p, "=")
		parts[k] = v
	}
	var set struct{ Keys []struct{ Kid, X string } }
	_ = json.Unmarshal(jwks, &set)
	sig, _ := base64.RawURLEncoding.DecodeString(parts["ed25519"])
	for _, k := range set.Keys {
		x, _ := base64.RawURLEncoding.DecodeString(k.X)
		if k.Kid == parts["kid"] && len(x) == ed25519.PublicKeySize &&
			ed25519.Verify(x, []byte(parts["t"]+"."+string(c.body)), sig) {
			return
		}
	}
	t.Fatalf("signature %q does not verify with %s", c.sig, jwks)
}

// A webhook delivery interrupted by kill -9 resumes after the restart with the same wake
// and not before its persisted next attempt time; the signing keys survive, so the resumed
// delivery verifies with the JWKS fetched before the crash; failed then active. Spec:
// B-7-04 (base protocol §7.1: retry metadata persisted), B-6-08, D10.
func TestWebhookRetryResumesAfterSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills dsd processes; skipped with -short")
	}
	dir := t.TempDir()
	flags := []string{"--webhooks", "--webhook-allow-loopback"}
	p := startDSD(t, dir, flags...)
	hook := newHookReceiver(t, 2)
	root := p.url + "/v1/stream/"
	mustDo(t, "PUT", root+"jobs/a", "text/plain", "", nil, 201)
	mustDo(t, "PUT", root+"__ds/subscriptions/r1", "application/json",
		`{"type":"webhook","streams":["jobs/a"],"webhook":{"url":"`+hook.srv.URL+`/h"},"lease_ttl_ms":600000}`, nil, 201)
	jwks := mustDo(t, "GET", root+"__ds/jwks.json", "", "", nil, 200)
	mustDo(t, "POST", root+"jobs/a", "text/plain", "work", nil, 204)
	first := hook.wait(t, 1, 5*time.Second)
	second := hook.wait(t, 2, 5*time.Second)
	if d := second.at.Sub(first.at); d < 750*time.Millisecond || d > 3*time.Second {
		t.Fatalf("second attempt after %v, want 1 s - 20 %% (and not much later)", d)
	}
	time.Sleep(300 * time.Millisecond) // let the second failure be recorded (one commit; the next attempt is >= 1.6 s away)
	if doc := mustDo(t, "GET", root+"__ds/subscriptions/r1", "", "", nil, 200); !bytes.Contains(doc, []byte(`"status":"failed"`)) {
		t.Fatalf("status after failed attempts: %s", doc)
	}
	p.kill()
	p = startDSD(t, dir, flags...)
	root = p.url + "/v1/stream/"
	third := hook.wait(t, 3, 10*time.Second)
	if third.wake != first.wake || second.wake != first.wake {
		t.Fatalf("wakes %+v %+v %+v: a restart must resume the same wake", first.wake, second.wake, third.wake)
	}
	if d := third.at.Sub(second.at); d < 1600*time.Millisecond-50*time.Millisecond {
		t.Fatalf("third attempt %v after the second: before the persisted next attempt (2 s - 20 %%)", d)
	}
	if got := mustDo(t, "GET", root+"__ds/jwks.json", "", "", nil, 200); !bytes.Equal(got, jwks) {
		t.Fatalf("JWKS changed across the restart:\n%s\n%s", jwks, got)
	}
	verifies(t, third, jwks)
	for end := time.Now().Add(3 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		doc := mustDo(t, "GET", root+"__ds/subscriptions/r1", "", "", nil, 200)
		if bytes.Contains(doc, []byte(`"status":"active"`)) && bytes.Contains(doc, []byte(`"acked_offset":"0000000000000000_0000000000000004"`)) {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("after the done reply: %s", doc)
		}
	}
}

// A claim token issued before a restart is accepted after it (the token key is
// persisted; the lease restarts in full). Spec: B-7-05, B-12.9-01, D10.
func TestPullWakeTokenSurvivesRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills dsd processes; skipped with -short")
	}
	dir := t.TempDir()
	p := startDSD(t, dir)
	root := p.url + "/v1/stream/"
	mustDo(t, "PUT", root+"wake/pool", "application/json", "[]", nil, 201)
	mustDo(t, "PUT", root+"jobs/b", "text/plain", "", nil, 201)
	mustDo(t, "PUT", root+"__ds/subscriptions/p1", "application/json",
		`{"type":"pull-wake","streams":["jobs/b"],"wake_stream":"wake/pool","lease_ttl_ms":600000}`, nil, 201)
	mustDo(t, "POST", root+"jobs/b", "text/plain", "job", nil, 204)
	var claim struct {
		WakeID     string `json:"wake_id"`
		Generation uint64 `json:"generation"`
		Token      string `json:"token"`
	}
	if err := json.Unmarshal(mustDo(t, "POST", root+"__ds/subscriptions/p1/claim", "application/json", `{"worker":"w1"}`, nil, 200), &claim); err != nil {
		t.Fatal(err)
	}
	p.kill()
	p = startDSD(t, dir)
	root = p.url + "/v1/stream/"
	body, _ := json.Marshal(map[string]any{"wake_id": claim.WakeID, "generation": claim.Generation,
		"acks": []map[string]string{{"stream": "jobs/b", "offset": "0000000000000000_0000000000000003"}}, "done": true})
	got := mustDo(t, "POST", root+"__ds/subscriptions/p1/ack", "application/json", string(body),
		map[string]string{"Authorization": "Bearer " + claim.Token}, 200)
	if string(got) != `{"ok":true,"next_wake":false}` {
		t.Fatalf("ack after restart: %s", got)
	}
	if events := mustDo(t, "GET", root+"wake/pool?offset=-1", "", "", nil, 200); !bytes.Contains(events, []byte(`"subscription_id":"p1"`)) {
		t.Fatalf("wake stream: %s", events)
	}
}

// --public-url takes an origin only.
func TestCheckPublicURL(t *testing.T) {
	for _, ok := range []string{"", "https://streams.example.com", "http://127.0.0.1:8080/"} {
		if err := checkPublicURL(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"streams.example.com", "ftp://x", "https://x/base", "https://u@x", "https://x/?q"} {
		if checkPublicURL(bad) == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
