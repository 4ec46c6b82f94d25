package httpd

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/internal/testserver"
)

// testServer is dsd's handler over a fresh engine, with the flat surface on bucket
// "default".
type testServer struct {
	t   *testing.T
	h   *Handler
	eng *engine.Engine
}

func newTestServer(t *testing.T) *testServer {
	t.Helper()
	return newTestServerWith(t, Config{LongPollTimeout: 100 * time.Millisecond, MaxBody: 1 << 20})
}

// newTestServerWith serves cfg (its CompatBucket set to "default") over a fresh engine.
func newTestServerWith(t *testing.T, cfg Config) *testServer {
	t.Helper()
	eng := testserver.Engine(t)
	cfg.CompatBucket = testserver.CompatBucket
	h := New(EngineStore{Engine: eng}, cfg)
	return &testServer{t: t, h: h, eng: eng}
}

// do sends a request; hdr is "Name: value" pairs.
func (s *testServer) do(method, path, body string, hdr ...string) *httptest.ResponseRecorder {
	s.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, rd)
	for _, h := range hdr {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Add(k, v)
	}
	w := httptest.NewRecorder()
	s.h.ServeHTTP(w, req)
	return w
}

// errorCode returns the code of a D7 error body, failing when the body is not one.
func errorCode(t *testing.T, w *httptest.ResponseRecorder) string {
	t.Helper()
	var body struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("error Content-Type %q, body %q", ct, w.Body.String())
	}
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || body.Error.Code == "" || body.Error.Message == "" {
		t.Fatalf("not a D7 error body: %q", w.Body.String())
	}
	return body.Error.Code
}

func status(w *httptest.ResponseRecorder) int { return w.Code }

var _ = http.StatusOK
