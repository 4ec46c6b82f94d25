package httpd

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/dsd-project/dsd/subs"
)

// newSubsServer is newTestServerWith plus the delivery worker.
func newSubsServer(t *testing.T, cfg Config) *testServer {
	t.Helper()
	s := newTestServerWith(t, cfg)
	w, err := subs.New(subs.Options{Store: s.eng})
	if err != nil {
		t.Fatal(err)
	}
	s.eng.SetStreamObserver(w.StreamChanged)
	if err := w.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = w.Stop(ctx)
	})
	s.h.cfg.Subscriptions = w
	return s
}

// The __ds routes: documents on both surfaces (one namespace per bucket), the JWKS
// alias at the root, 404 and 405 for what is not a route, never a stream, and the
// protocol's codes. Spec: B-6-01, B-6-03, B-6-06, B-6-08 (base protocol §6), D1, D10.
func TestSubscriptionRoutes(t *testing.T) {
	s := newSubsServer(t, Config{LongPollTimeout: 100 * time.Millisecond, MaxBody: 1 << 20})
	s.do("PUT", "/v1/stream/wake/pool", "[]", "Content-Type: application/json")
	body := `{"type":"pull-wake","streams":["jobs/a"],"wake_stream":"wake/pool"}`
	w := s.do("PUT", "/v1/stream/__ds/subscriptions/s1", body, "Content-Type: application/json")
	if status(w) != 201 || w.Header().Get("Cache-Control") != ccNoStore {
		t.Fatalf("create: %d %s", status(w), w.Body)
	}
	var doc map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc["pattern"] != nil || doc["description"] != nil || doc["webhook"] != nil || doc["wake_stream"] != "wake/pool" ||
		!strings.HasSuffix(doc["created_at"].(string), "Z") {
		t.Fatalf("document %s", w.Body)
	}
	if w := s.do("GET", "/default/__ds/subscriptions/s1", ""); status(w) != 200 {
		t.Fatalf("the compat bucket's namespace on the bucketed surface: %d", status(w))
	}
	s.do("PUT", "/other", "")
	if w := s.do("GET", "/other/__ds/subscriptions/s1", ""); status(w) != 404 || errorCode(t, w) != "SUBSCRIPTION_NOT_FOUND" {
		t.Fatalf("another bucket's namespace: %d %s", status(w), w.Body)
	}
	if w := s.do("PUT", "/nosuchbucket/__ds/subscriptions/s1", body, "Content-Type: application/json"); status(w) != 404 {
		t.Fatalf("missing bucket: %d %s", status(w), w.Body)
	}
	for _, c := range []struct {
		method, path, body, ct string
		status                 int
		code                   string
	}{
		{"PUT", "/v1/stream/__ds/subscriptions/s1", body, "text/plain", 400, "INVALID_REQUEST"},
		{"PUT", "/v1/stream/__ds/subscriptions/s1", `{"type":"pull-wake"`, "application/json", 400, "INVALID_REQUEST"},
		{"PUT", "/v1/stream/__ds/subscriptions/s2", `{"type":"webhook","streams":["a"],"webhook":{"url":"https://example.com/h"}}`, "application/json", 400, "INVALID_REQUEST"},
		{"PUT", "/v1/stream/__ds/subscriptions/a%20b", body, "application/json", 400, "INVALID_REQUEST"},
		{"POST", "/v1/stream/__ds/subscriptions/s1", body, "application/json", 405, "METHOD_NOT_ALLOWED"},
		{"GET", "/v1/stream/__ds/whatever", "", "", 404, "NOT_FOUND"},
		{"PUT", "/v1/stream/__ds", "", "text/plain", 404, "NOT_FOUND"},
		{"GET", "/__ds/subscriptions/s1", "", "", 404, "NOT_FOUND"},
		{"POST", "/v1/stream/__ds/subscriptions/s1/claim", `{}`, "application/json", 400, "INVALID_REQUEST"},
		{"POST", "/v1/stream/__ds/subscriptions/s1/ack", `{"wake_id":"w","generation":1}`, "application/json", 401, "TOKEN_INVALID"},
		{"POST", "/v1/stream/__ds/subscriptions/s1/ack", `{"acks":[{"stream":"jobs/a","offset":"x"}]}`, "application/json", 400, "INVALID_OFFSET"},
		{"POST", "/v1/stream/__ds/subscriptions/s1/callback", `{}`, "application/json", 400, "INVALID_REQUEST"}, // a pull-wake subscription
		{"POST", "/v1/stream/__ds/subscriptions/s1/claim", `{"worker":"w"}`, "application/json", 409, "NO_PENDING_WORK"},
	} {
		var hdr []string
		if c.ct != "" {
			hdr = append(hdr, "Content-Type: "+c.ct)
		}
		w := s.do(c.method, c.path, c.body, hdr...)
		if status(w) != c.status || errorCode(t, w) != c.code {
			t.Errorf("%s %s %s: %d %s, want %d %s", c.method, c.path, c.body, status(w), w.Body, c.status, c.code)
		}
	}
	ack := `{"acks":[{"stream":"jobs/a","offset":"-1"}]}`
	if w := s.do("POST", "/v1/stream/__ds/subscriptions/s1/ack", ack, "Content-Type: application/json"); status(w) != 400 ||
		!strings.Contains(w.Body.String(), `acks[0].offset \"-1\"`) || strings.Contains(w.Body.String(), "must be -1") {
		t.Errorf("an ack offset of -1: %d %s, want 400 naming acks[0] (-1 is not an ack offset)", status(w), w.Body)
	}
	if w := s.do("HEAD", "/v1/stream/__ds", ""); status(w) == 200 {
		t.Fatal("__ds is a stream")
	}
	for _, p := range []string{"/v1/stream/__ds/jwks.json", "/default/__ds/jwks.json", "/__ds/jwks.json"} {
		w := s.do("GET", p, "")
		if status(w) != 200 || w.Header().Get("Content-Type") != "application/jwk-set+json" ||
			w.Header().Get("Cache-Control") != "public, max-age=300" || !strings.Contains(w.Body.String(), `"kid":"ds_`) {
			t.Fatalf("GET %s: %d %v %s", p, status(w), w.Header(), w.Body)
		}
	}
	if w := s.do("DELETE", "/v1/stream/__ds/subscriptions/s1", ""); status(w) != 204 {
		t.Fatalf("delete: %d", status(w))
	}
	if w := s.do("DELETE", "/v1/stream/__ds/subscriptions/never", ""); status(w) != 204 {
		t.Fatalf("delete of an unknown id: %d", status(w))
	}
}

// Unsafe webhook URLs are refused at PUT; loopback only with the development exception;
// with --auth-tokens, callbacks and the JWKS authenticate themselves while the rest needs
// a token. Spec: B-6-04, B-6-09, B-12.9-01, D10.
func TestSubscriptionWebhookPolicyAndAuth(t *testing.T) {
	s := newSubsServer(t, Config{MaxBody: 1 << 20, Webhooks: true, AuthTokens: []string{"secret"}})
	auth := "Authorization: Bearer secret"
	hook := func(u string) string {
		return `{"type":"webhook","streams":["a"],"webhook":{"url":"` + u + `"}}`
	}
	for _, u := range []string{"http://10.0.0.1/hook", "http://127.0.0.1:1/x", "https://169.254.169.254/", "https://[::1]/x", "ftp://example.com/"} {
		w := s.do("PUT", "/v1/stream/__ds/subscriptions/h", hook(u), "Content-Type: application/json", auth)
		if status(w) != 400 || errorCode(t, w) != "WEBHOOK_URL_REJECTED" {
			t.Errorf("%s: %d %s", u, status(w), w.Body)
		}
	}
	if w := s.do("PUT", "/v1/stream/__ds/subscriptions/h", hook("https://example.com/h"), "Content-Type: application/json"); status(w) != 401 {
		t.Fatalf("create without a token: %d", status(w))
	}
	w := s.do("PUT", "/v1/stream/__ds/subscriptions/h", hook("https://example.com/h"), "Content-Type: application/json", auth)
	if status(w) != 201 || strings.Contains(strings.ToLower(w.Body.String()), "secret") {
		t.Fatalf("create: %d %s", status(w), w.Body)
	}
	if w := s.do("GET", "/v1/stream/__ds/jwks.json", ""); status(w) != 200 {
		t.Fatalf("JWKS without a token: %d", status(w))
	}
	if w := s.do("POST", "/v1/stream/__ds/subscriptions/h/callback", `{}`, "Content-Type: application/json"); status(w) != 401 || errorCode(t, w) != "TOKEN_INVALID" {
		t.Fatalf("callback judged by its own token: %d %s", status(w), w.Body)
	}
	s.h.cfg.WebhookAllowLoopback = true
	if w := s.do("PUT", "/v1/stream/__ds/subscriptions/l", hook("http://127.0.0.1:1/x"), "Content-Type: application/json", auth); status(w) != 201 {
		t.Fatalf("loopback with the exception: %d %s", status(w), w.Body)
	}
}
