package ops

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/httpd"
	"github.com/dsd-project/dsd/internal/testserver"
)

func newHandler(t testing.TB) (*engine.Engine, *httpd.Handler) {
	return newHandlerWith(t, httpd.Config{})
}

// newHandlerWith serves cfg (the flat surface on bucket "default") over a fresh engine.
func newHandlerWith(t testing.TB, cfg httpd.Config) (*engine.Engine, *httpd.Handler) {
	t.Helper()
	eng := testserver.Engine(t)
	cfg.CompatBucket = testserver.CompatBucket
	h := httpd.New(httpd.EngineStore{Engine: eng}, cfg)
	t.Cleanup(h.Shutdown)
	return eng, h
}

func serve(h http.Handler, method, path, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "text/plain")
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

// Before the engine is open /healthz is 200 and /readyz 503 with Retry-After; after, 200.
func TestReadiness(t *testing.T) {
	a := NewAdmin(NewMetrics(), nil)
	if w := serve(a, "GET", "/healthz", ""); w.Code != 200 {
		t.Fatalf("healthz: %d", w.Code)
	}
	w := serve(a, "GET", "/readyz", "")
	if w.Code != 503 || w.Header().Get("Retry-After") == "" || !strings.Contains(w.Body.String(), `"starting"`) {
		t.Fatalf("readyz before open: %d %v %s", w.Code, w.Header(), w.Body)
	}
	eng, _ := newHandler(t)
	a.SetEngine(eng)
	if w := serve(a, "GET", "/readyz", ""); w.Code != 200 {
		t.Fatalf("readyz: %d %s", w.Code, w.Body)
	}
	eng.Close()
	if w := serve(a, "GET", "/readyz", ""); w.Code != 503 || !strings.Contains(w.Body.String(), "shutting down") {
		t.Fatalf("readyz after close: %d %s", w.Code, w.Body)
	}
}

// The guard protects /backup and /debug/pprof/, not the probes and metrics.
func TestAdminGuard(t *testing.T) {
	a := NewAdmin(NewMetrics(), func(r *http.Request) bool { return r.Header.Get("Authorization") == "Bearer ok" })
	eng, _ := newHandler(t)
	a.SetEngine(eng)
	for path, want := range map[string]int{"/backup": 401, "/debug/pprof/": 401, "/metrics": 200, "/healthz": 200, "/readyz": 200} {
		if w := serve(a, "GET", path, ""); w.Code != want {
			t.Errorf("%s: %d, want %d", path, w.Code, want)
		}
	}
	req := httptest.NewRequest("GET", "/backup", nil)
	req.Header.Set("Authorization", "Bearer ok")
	w := httptest.NewRecorder()
	a.ServeHTTP(w, req)
	if w.Code != 200 || w.Header().Get("Content-Length") != strconv.Itoa(w.Body.Len()) || w.Body.Len() == 0 {
		t.Fatalf("backup: %d, Content-Length %s, %d bytes", w.Code, w.Header().Get("Content-Length"), w.Body.Len())
	}
}

// Request metrics are labelled by route, method and status; error codes reach the log.
func TestObserveMetricsAndLog(t *testing.T) {
	_, h := newHandler(t)
	m := NewMetrics()
	var logb strings.Builder
	o := Observe(h, slog.New(slog.NewTextHandler(&logb, nil)), m)
	serve(o, "PUT", "/v1/stream/a", "hi")
	serve(o, "POST", "/v1/stream/a", "there")
	serve(o, "GET", "/v1/stream/missing?offset=-1", "")
	serve(o, "GET", "/nope/x/y/z", "")
	w := serve(m.Handler(), "GET", "/metrics", "")
	body, _ := io.ReadAll(w.Body)
	for _, want := range []string{
		`dsd_http_request_duration_seconds_count{method="PUT",route="stream",status="201"} 1`,
		`dsd_http_request_duration_seconds_count{method="GET",route="stream",status="404"} 1`,
		`dsd_http_request_duration_seconds_count{method="GET",route="none",status="404"} 1`,
		"dsd_appends_total 1", "dsd_append_bytes_total 5",
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if !strings.Contains(logb.String(), "code=STREAM_NOT_FOUND") || strings.Count(logb.String(), "msg=request") != 4 {
		t.Errorf("log:\n%s", logb.String())
	}
}

// Only a stream's live reads are labelled with their mode: a listing with live=sse or a
// refused /bootstrap?live=long-poll keeps its route's label.
func TestRouteLabelLiveOnlyOnStreams(t *testing.T) {
	for _, c := range []struct{ route, mode, want string }{
		{"stream", "sse", "stream_sse"}, {"stream", "long-poll", "stream_long_poll"}, {"stream", "", "stream"},
		{"streams", "sse", "streams"}, {"bootstrap", "long-poll", "bootstrap"}, {"", "sse", "none"}, {"", "", "none"},
	} {
		if got := routeLabel(c.route, c.mode); got != c.want {
			t.Errorf("routeLabel(%q, %q) = %q, want %q", c.route, c.mode, got, c.want)
		}
	}
}

// The cost of the request log and metrics on a small catch-up read (compare with Bare).
func BenchmarkReadObserved(b *testing.B) {
	_, h := newHandler(b)
	benchRead(b, Observe(h, slog.New(slog.NewTextHandler(io.Discard, nil)), NewMetrics()))
}

func BenchmarkReadBare(b *testing.B) {
	_, h := newHandler(b)
	benchRead(b, h)
}

func benchRead(b *testing.B, h http.Handler) {
	serve(h, "PUT", "/v1/stream/b", strings.Repeat("x", 100))
	req := httptest.NewRequest("GET", "/v1/stream/b?offset=-1", nil)
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != 200 {
			b.Fatal(w.Code)
		}
	}
}

// SSE responses, hijacked on HTTP/1.1 and flushed on HTTP/2, are logged and counted when
// they end.
func TestObserveLiveReads(t *testing.T) {
	_, h := newHandlerWith(t, httpd.Config{SSEMaxAge: 200 * time.Millisecond})
	for _, h2 := range []bool{false, true} {
		m := NewMetrics()
		var logb syncBuilder
		ts := httptest.NewUnstartedServer(Observe(h, slog.New(slog.NewTextHandler(&logb, nil)), m))
		ts.EnableHTTP2 = h2
		ts.StartTLS()
		cl := ts.Client()
		req, _ := http.NewRequest("PUT", ts.URL+"/v1/stream/live", strings.NewReader("x"))
		req.Header.Set("Content-Type", "text/plain")
		if resp, err := cl.Do(req); err != nil || (resp.StatusCode != 201 && resp.StatusCode != 200) {
			t.Fatalf("PUT: %v %v", resp, err)
		}
		resp, err := cl.Get(ts.URL + "/v1/stream/live?offset=-1&live=sse")
		if err != nil || resp.StatusCode != 200 || (resp.ProtoMajor == 2) != h2 {
			t.Fatalf("SSE (h2 %v): %v %v", h2, resp, err)
		}
		io.Copy(io.Discard, resp.Body) // until --sse-max-age ends it
		resp.Body.Close()
		for i := 0; i < 100 && !strings.Contains(logb.String(), "live=sse"); i++ {
			time.Sleep(20 * time.Millisecond)
		}
		if !strings.Contains(logb.String(), "live=sse") {
			t.Fatalf("h2 %v: no SSE log line:\n%s", h2, logb.String())
		}
		w := serve(m.Handler(), "GET", "/metrics", "")
		if !strings.Contains(w.Body.String(), `dsd_live_readers{mode="sse"} 0`) ||
			!strings.Contains(w.Body.String(), `route="stream_sse",status="200"} 1`) {
			t.Errorf("h2 %v: metrics after the SSE read:\n%s", h2, grepLines(w.Body.String(), "sse"))
		}
		ts.Close()
	}
}

type syncBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuilder) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuilder) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// A cluster node's readiness (SetReadiness) decides /readyz: 503 with its reason, then 200.
func TestClusterReadiness(t *testing.T) {
	a := NewAdmin(NewMetrics(), nil)
	var err error = errors.New("partition 3 has no owner yet")
	a.SetReadiness(func() error { return err })
	if w := serve(a, "GET", "/readyz", ""); w.Code != 503 || !strings.Contains(w.Body.String(), "partition 3") {
		t.Fatalf("readyz without an owner: %d %s", w.Code, w.Body)
	}
	err = nil
	if w := serve(a, "GET", "/readyz", ""); w.Code != 200 {
		t.Fatalf("readyz with every partition owned: %d %s", w.Code, w.Body)
	}
}

// Every 4xx of the admin listener has the protocol listener's D7 JSON error body, the
// ones ServeMux and pprof write as text included; 405 keeps Allow, 401 WWW-Authenticate.
func TestAdminErrorsAreJSON(t *testing.T) {
	a := NewAdmin(NewMetrics(), func(r *http.Request) bool { return r.Header.Get("Authorization") == "Bearer ok" })
	for _, c := range []struct {
		method, path, auth, code, header, inMessage string
		status                                      int
	}{
		{"GET", "/nope", "", "NOT_FOUND", "", "/metrics", 404},
		{"POST", "/metrics", "", "METHOD_NOT_ALLOWED", "Allow", "GET, HEAD", 405},
		{"GET", "/backup", "", "UNAUTHORIZED", "WWW-Authenticate", "admin scope", 401},
		{"GET", "/debug/pprof/no-such-profile", "Bearer ok", "NOT_FOUND", "", "Unknown profile", 404},
		{"GET", "/debug/pprof/heap?seconds=x", "Bearer ok", "INVALID_QUERY", "", `"seconds"`, 400},
	} {
		req := httptest.NewRequest(c.method, c.path, nil)
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		w := httptest.NewRecorder()
		a.ServeHTTP(w, req)
		if w.Code != c.status {
			t.Errorf("%s %s: %d, want %d: %s", c.method, c.path, w.Code, c.status, w.Body)
			continue
		}
		if code, msg := checkErrorBody(t, w); code != c.code || !strings.Contains(msg, c.inMessage) {
			t.Errorf("%s %s: %s %q, want %s and a message with %q", c.method, c.path, code, msg, c.code, c.inMessage)
		}
		if c.header != "" && w.Header().Get(c.header) == "" {
			t.Errorf("%s %s: no %s", c.method, c.path, c.header)
		}
	}
}

// checkErrorBody checks that w carries a D7 error body and returns its code and message.
func checkErrorBody(t *testing.T, w *httptest.ResponseRecorder) (code, message string) {
	t.Helper()
	var body struct {
		Error struct{ Code, Message string }
	}
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("%d with Content-Type %q: %s", w.Code, ct, w.Body)
	}
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || body.Error.Code == "" || body.Error.Message == "" {
		t.Errorf("%d without a D7 error body (%v): %s", w.Code, err, w.Body)
	}
	return body.Error.Code, body.Error.Message
}
