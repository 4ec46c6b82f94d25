package ops

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"
)

// slogLine is what slog's own handler writes for l: the reference of the fast path.
func slogLine(t testing.TB, json bool, l *requestLine) string {
	var b bytes.Buffer
	var h slog.Handler = slog.NewTextHandler(&b, nil)
	if json {
		h = slog.NewJSONHandler(&b, nil)
	}
	r := l.record()
	if err := h.Handle(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// fastLine is what the fast path writes for l, and whether it took l.
func fastLine(json bool, l *requestLine) (string, bool) {
	var b bytes.Buffer
	h := NewLogHandler(&b, json, nil).(*logHandler)
	ok := h.write(l)
	return b.String(), ok
}

func checkLine(t *testing.T, l requestLine) {
	t.Helper()
	for _, json := range []bool{false, true} {
		want := slogLine(t, json, &l)
		got, ok := fastLine(json, &l)
		if ok && got != want {
			t.Errorf("json %v:\n got %q\nwant %q", json, got, want)
		}
		var b bytes.Buffer // through the logger: the fast path or slog, the same bytes
		logRequest(slog.New(NewLogHandler(&b, json, nil)), &l)
		if b.String() != want {
			t.Errorf("json %v via logRequest:\n got %q\nwant %q", json, b.String(), want)
		}
	}
}

// The fast path writes exactly what slog's text and JSON handlers write.
func TestRequestLineMatchesSlog(t *testing.T) {
	at := time.Date(2026, 12, 1, 18, 0, 0, 120_300_000, time.UTC)
	base := requestLine{time: at, status: 204, bytes: 0, duration: 1234567 * time.Nanosecond,
		requestFields: requestFields{method: "POST", path: "/v1/stream/chat", remote: "127.0.0.1:41596", proto: "HTTP/1.1"}}
	cases := []func(l *requestLine){
		func(l *requestLine) {},
		func(l *requestLine) { l.query = "offset=-1&live=sse"; l.live = "sse"; l.method = "GET" },
		func(l *requestLine) { l.code = "STREAM_NOT_FOUND"; l.status = 404; l.bytes = 87 },
		func(l *requestLine) { l.path = "/a b"; l.remote = "[::1]:80"; l.proto = "HTTP/2.0" },
		func(l *requestLine) { l.path = `/q"uote`; l.query = `x=\` },
		func(l *requestLine) { l.path = "/ünï" },
		func(l *requestLine) { l.remote = ""; l.duration = 0 },
		func(l *requestLine) { l.duration = 90 * time.Second; l.time = at.Truncate(time.Second) },
		func(l *requestLine) { l.time = at.In(time.FixedZone("x", -7*3600)); l.duration = 999 },
		func(l *requestLine) { l.path = "/%2F<&>"; l.query = "a=<b>&c" },
	}
	if _, ok := fastLine(false, &base); !ok {
		t.Fatal("the fast path refused a plain line")
	}
	for _, c := range cases {
		l := base
		c(&l)
		checkLine(t, l)
	}
}

// FuzzRequestLine: for any fields the request log line is what slog writes.
func FuzzRequestLine(f *testing.F) {
	f.Add("GET", "/v1/stream/a", "offset=-1", 200, int64(5), int64(110313), "", "sse", "10.0.0.7:1", "HTTP/2.0", int64(1764612000123456789))
	f.Add("POST", "/x y", "", 204, int64(0), int64(1), "BAD_REQUEST", "", "", "HTTP/1.1", int64(0))
	f.Fuzz(func(t *testing.T, method, path, query string, status int, n, d int64, code, live, remote, proto string, ns int64) {
		if path == "" {
			path = "/"
		}
		checkLine(t, requestLine{time: time.Unix(0, ns).UTC(), status: status, bytes: n, duration: time.Duration(d),
			code: code, live: live, requestFields: requestFields{method: method, path: path, query: query, remote: remote, proto: proto}})
	})
}

// Observe writes the URL's request URI as the path, as url.URL.RequestURI gives it.
func TestRequestLinePathIsRequestURI(t *testing.T) {
	_, h := newHandler(t)
	for _, target := range []string{"/v1/stream/a?offset=-1", "/v1/stream/a%20b", "/v1/stream/a?", "/v1/stream/%C3%BC"} {
		var b strings.Builder
		serve(Observe(h, slog.New(NewLogHandler(&b, false, nil)), nil), "GET", target, "")
		u, _ := url.ParseRequestURI(target)
		want := slogLine(t, false, &requestLine{requestFields: requestFields{path: u.RequestURI()}})
		i := strings.Index(want, " path=")
		j := strings.Index(want[i+1:], " ")
		if !strings.Contains(b.String(), want[i:i+1+j+1]) {
			t.Errorf("%s: log %q lacks %q", target, b.String(), want[i:i+1+j+1])
		}
	}
}

// BenchmarkRequestLine is the cost of writing one request log line: the fast path, and
// slog's handler for the same line.
func BenchmarkRequestLine(b *testing.B) {
	l := requestLine{time: time.Now(), status: 204, duration: 1234567,
		requestFields: requestFields{method: "POST", path: "/v1/stream/bench-17", remote: "127.0.0.1:41596", proto: "HTTP/1.1"}}
	for _, json := range []bool{false, true} {
		name := map[bool]string{false: "text", true: "json"}[json]
		b.Run(name+"/fast", func(b *testing.B) {
			log := slog.New(NewLogHandler(io.Discard, json, nil))
			b.ReportAllocs()
			for b.Loop() {
				logRequest(log, &l)
			}
		})
		b.Run(name+"/slog", func(b *testing.B) {
			var h slog.Handler = slog.NewTextHandler(io.Discard, nil)
			if json {
				h = slog.NewJSONHandler(io.Discard, nil)
			}
			log := slog.New(h)
			b.ReportAllocs()
			for b.Loop() {
				logRequest(log, &l)
			}
		})
	}
}
