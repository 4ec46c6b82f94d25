package ops

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dsd-project/dsd/httpd"
)

// Observe wraps the protocol handler with the request log (one line per request at info,
// live reads when they end; nil log: none) and the request metrics (nil m: none), D12.
func Observe(next http.Handler, log *slog.Logger, m *Metrics) http.Handler {
	if log == nil && m == nil {
		return next
	}
	return &observer{next: next, log: log, m: m}
}

type observer struct {
	next http.Handler
	log  *slog.Logger
	m    *Metrics
}

// exchange is one request being observed. It is finished once: when the handler returns,
// or, for a response on a hijacked connection (SSE, httpd/ssehijack.go), when both the
// handler returned and the connection closed.
type exchange struct {
	o       *observer
	r       *http.Request // nil once detached: line then holds what finish needs
	line    requestLine
	ri      httpd.RequestInfo
	start   time.Time
	mode    string // live mode: "sse", "long-poll" or ""
	pending atomic.Int32
	status  int
	bytes   atomic.Int64
}

func (o *observer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	x := &exchange{o: o, start: time.Now(), mode: liveMode(r)}
	x.pending.Store(1)
	x.r = r.WithContext(httpd.WithRequestInfo(r.Context(), &x.ri))
	x.line.method = r.Method
	if x.mode != "" && o.m != nil {
		o.m.live.WithLabelValues(x.mode).Inc()
	}
	rec := &recorder{ResponseWriter: w, x: x}
	defer x.release() // also when the handler panics (http.ErrAbortHandler)
	o.next.ServeHTTP(rec, x.r)
}

// release drops one hold on x and finishes it with the last.
func (x *exchange) release() {
	if x.pending.Add(-1) == 0 {
		x.finish()
	}
}

// requestLine is what the log line and the metrics need of a request.
type requestLine struct {
	method, uri, remote, proto string
}

// detach keeps only the request's log fields, copied, so that an exchange outliving its
// handler (a hijacked SSE connection parked in its hub) pins neither the request, nor its
// header map and contexts, nor the request line (issue 19: 10,000 idle subscribers in
// <= 1 KiB each).
func (x *exchange) detach() {
	rl := x.requestLine()
	x.line = requestLine{method: constant(rl.method, http.MethodGet), uri: strings.Clone(rl.uri),
		remote: rl.remote, proto: constant(rl.proto, "HTTP/1.1")}
	x.r = nil
}

// constant returns c when s equals it, else a copy of s.
func constant(s, c string) string {
	if s == c {
		return c
	}
	return strings.Clone(s)
}

func (x *exchange) requestLine() requestLine {
	if x.r == nil {
		return x.line
	}
	return requestLine{method: x.r.Method, uri: x.r.URL.RequestURI(), remote: x.r.RemoteAddr, proto: x.r.Proto}
}

func (x *exchange) finish() {
	d := time.Since(x.start)
	status, n := x.status, x.bytes.Load()
	if status == 0 {
		status = http.StatusOK
	}
	route := x.ri.Route
	if route == "" {
		route = "none"
	}
	if x.mode != "" {
		route += "_" + strings.ReplaceAll(x.mode, "-", "_")
	}
	if m := x.o.m; m != nil {
		m.reqDur.WithLabelValues(route, x.line.method, strconv.Itoa(status)).Observe(d.Seconds())
		m.respBytes.WithLabelValues(route).Add(float64(n))
		if x.mode != "" {
			m.live.WithLabelValues(x.mode).Dec()
		}
		if x.line.method == http.MethodPost && status < 300 && (x.ri.Route == "stream" || x.ri.Route == "append_batch") {
			m.appends.Inc()
			m.appendBytes.Add(float64(x.ri.BodyBytes))
		}
	}
	if x.o.log != nil {
		rl := x.requestLine()
		attrs := []slog.Attr{slog.String("method", rl.method), slog.String("path", rl.uri),
			slog.Int("status", status), slog.Int64("bytes", n), slog.Duration("duration", d)}
		if x.ri.Code != "" {
			attrs = append(attrs, slog.String("code", x.ri.Code))
		}
		if x.mode != "" {
			attrs = append(attrs, slog.String("live", x.mode))
		}
		attrs = append(attrs, slog.String("remote", rl.remote), slog.String("proto", rl.proto))
		x.o.log.LogAttrs(context.Background(), slog.LevelInfo, "request", attrs...)
	}
}

// liveMode returns the live mode a GET asks for (B-5.7, B-5.8), or "".
func liveMode(r *http.Request) string {
	if r.Method != http.MethodGet || !strings.Contains(r.URL.RawQuery, "live=") {
		return ""
	}
	switch r.URL.Query().Get("live") {
	case "sse":
		return "sse" // a constant: the query's substring would pin the request line
	case "long-poll":
		return "long-poll"
	}
	return ""
}
