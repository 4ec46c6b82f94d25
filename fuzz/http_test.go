package fuzz

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/httpd"
)

func knownIssues() bool { return os.Getenv("DSD_KNOWN_ISSUES") == "1" }

var (
	handlerOnce sync.Once
	handler     http.Handler
	handlerErr  error
	httpDir     string // removed by TestMain
)

// sharedHandler is dsd's HTTP layer over one engine per fuzzing process (opening a data file
// per input would dominate), with a bucket "fuzz" and the flat surface's "default"
// bucket, and live reads that end within milliseconds.
func sharedHandler(t testing.TB) http.Handler {
	handlerOnce.Do(func() {
		dir, err := os.MkdirTemp("", "dsd-fuzz-http-")
		if err != nil {
			handlerErr = err
			return
		}
		httpDir = dir
		e, err := engine.Open(dir, engine.Options{NoSync: true, ReadChunkBytes: 64, SweepInterval: time.Hour})
		if err != nil {
			handlerErr = err
			return
		}
		for _, b := range []string{"fuzz", "default"} {
			if _, err := e.CreateBucket(b); err != nil {
				handlerErr = err
				return
			}
		}
		handler = httpd.New(httpd.EngineStore{Engine: e}, httpd.Config{CompatBucket: "default",
			LongPollTimeout: 5 * time.Millisecond, SSEMaxAge: 20 * time.Millisecond,
			SSEKeepAlive: 5 * time.Millisecond, MaxBody: 1 << 16})
	})
	if handlerErr != nil {
		t.Fatal(handlerErr)
	}
	return handler
}

var methods = []string{"GET", "HEAD", "PUT", "POST", "DELETE", "OPTIONS", "PATCH", "TRACE"}

// FuzzHTTPHandler: any request dsd's HTTP layer can receive (any method, path, query,
// protocol headers and body) is answered with a status below 500, apart from 501 for
// what is deliberately not implemented (A-32: __ds), and never with a panic (the
// router's panic handler would answer 500). Error bodies are the JSON of D7.
func FuzzHTTPHandler(f *testing.F) {
	seeds := []struct {
		method uint8
		path   string
		header string
		body   string
	}{
		{2, "/fuzz/s", "Content-Type: text/plain", "hello"},
		{3, "/fuzz/s", "Content-Type: text/plain\nProducer-Id: p\nProducer-Epoch: 0\nProducer-Seq: 0", "a"},
		{3, "/fuzz/s", "Stream-Closed: true", ""},
		{0, "/fuzz/s?offset=-1", "", ""},
		{0, "/fuzz/s?offset=now&live=long-poll", "", ""},
		{0, "/fuzz/s?offset=-1&live=sse", "", ""},
		{2, "/v1/stream/j", "Content-Type: application/json", "[1,2,{\"a\":[]}]"},
		{0, "/v1/stream/j?offset=0000000000000000_0000000000000002", "", ""},
		{2, "/fuzz/f", "Stream-Forked-From: /fuzz/s\nStream-Fork-Offset: 0000000000000000_0000000000000001\nStream-Fork-Sub-Offset: 2", ""},
		{2, "/fuzz/s/snapshot/0000000000000000_0000000000000005", "Content-Type: text/plain", "snap"},
		{2, "/fuzz/s/retention/0000000000000000_0000000000000005", "", ""},
		{0, "/fuzz/s/bootstrap", "", ""},
		{2, "/fuzz/s/attrs", "Content-Type: application/json", "{\"title\":\"t\"}"},
		{3, "/fuzz/s/append-batch", "Content-Type: text/plain", "\x00\x00\x00\x01a\x00\x00\x00\x02bc"},
		{0, "/fuzz/j?record=0&max_records=2", "", ""},
		{0, "/fuzz/streams?prefix=s&limit=2", "", ""},
		{4, "/fuzz", "", ""},
		{2, "/__ds/subscriptions/x", "", "{}"},
		{2, "/fuzz/s", "Stream-TTL: 1\nStream-Expires-At: 2030-01-01T00:00:00Z", ""},
		{0, "/%zz/%", "", ""},
	}
	for _, s := range seeds {
		f.Add(s.method, s.path, s.header, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, method uint8, target, header string, body []byte) {
		u, err := url.ParseRequestURI(target)
		if err != nil || u.Host != "" || !strings.HasPrefix(target, "/") {
			return // net/http never delivers such a request line
		}
		r := httptest.NewRequest(http.MethodGet, "/", bytes.NewReader(body))
		r.Method = methods[int(method)%len(methods)]
		r.URL, r.RequestURI = u, target
		r.ContentLength = int64(len(body))
		if len(body) == 0 {
			r.Body = http.NoBody
		}
		sc := bufio.NewScanner(strings.NewReader(header))
		for sc.Scan() {
			name, value, ok := strings.Cut(sc.Text(), ":")
			if !ok || !validHeader(name, value) {
				continue // net/http rejects such header lines
			}
			r.Header.Add(name, strings.TrimSpace(value))
		}
		w := httptest.NewRecorder()
		sharedHandler(t).ServeHTTP(w, r)
		res := w.Result()
		code := errorCode(w.Body.Bytes())
		if r.Method == http.MethodHead && res.StatusCode >= 400 {
			// HEAD has no body: the same request as GET shows the error code.
			g := httptest.NewRequest(http.MethodGet, "/", nil)
			g.URL, g.RequestURI, g.Header = u, target, r.Header
			gw := httptest.NewRecorder()
			sharedHandler(t).ServeHTTP(gw, g)
			code = errorCode(gw.Body.Bytes())
		}
		if res.StatusCode >= 500 && !(res.StatusCode == 501 && code == "NOT_IMPLEMENTED") {
			t.Fatalf("%s %s\n%s\n%q\n→ %d %s", r.Method, target, header, body, res.StatusCode, w.Body.String())
		}
		if res.StatusCode >= 400 && code == "" {
			t.Fatalf("%s %s → %d without a D7 error body: %q", r.Method, target, res.StatusCode, w.Body.String())
		}
	})
}

func errorCode(b []byte) string {
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	if json.Unmarshal(b, &e) != nil {
		return ""
	}
	return e.Error.Code
}

// validHeader reports whether net/http would accept the header line: a token name and
// a value without control characters other than horizontal tab.
func validHeader(name, value string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("()<>@,;:\\\"/[]?={}", c) >= 0 {
			return false
		}
	}
	for i := 0; i < len(value); i++ {
		if c := value[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}
