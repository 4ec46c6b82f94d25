package ops

import (
	"log/slog"
	"net/http"
	"strings"
	"sync"
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

// exchange is one request being observed, with the ResponseWriter the handler sees. It is
// finished once: when the handler returns, or, for a response on a hijacked connection
// (SSE, httpd/ssehijack.go), when both the handler returned and the connection closed.
// Exchanges are reused (exchanges), except those of hijacked connections, whose
// observedConn may still be written to after the close.
type exchange struct {
	o        *observer
	r        *http.Request  // nil once detached: det then holds what finish needs
	det      *requestFields // the request's fields, once detached
	rec      recorder
	ri       httpd.RequestInfo
	start    time.Time
	mode     string // live mode: "sse", "long-poll" or ""
	pending  atomic.Int32
	status   int
	bytes    atomic.Int64
	hijacked bool
}

var exchanges = sync.Pool{New: func() any { x := new(exchange); x.rec.x = x; return x }}

func (o *observer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	x := exchanges.Get().(*exchange)
	x.o, x.start, x.mode = o, time.Now(), liveMode(r)
	x.pending.Store(1)
	x.r = r.WithContext(httpd.WithRequestInfo(r.Context(), &x.ri))
	if x.mode != "" && o.m != nil {
		o.m.liveGauge(x.mode).Inc()
	}
	x.rec.ResponseWriter = w
	defer x.handlerDone() // also when the handler panics (http.ErrAbortHandler)
	o.next.ServeHTTP(&x.rec, x.r)
}

// handlerDone drops the handler's hold on x. A hijacked exchange then lets go of net/http's
// writer, which nothing may use any more, so as not to pin it while the connection lives.
func (x *exchange) handlerDone() {
	if x.hijacked {
		x.rec.ResponseWriter = nil
	}
	x.release()
}

// detach keeps only the request's log fields, copied, so that an exchange outliving its
// handler (a hijacked SSE connection parked in its hub) pins neither the request, nor its
// header map, body and contexts, nor the request line (issue 19: 10,000 idle subscribers
// in <= 1 KiB each). Called by Hijack, on the handler's goroutine.
func (x *exchange) detach() {
	x.hijacked = true
	f := x.fields()
	x.det = &requestFields{method: constant(f.method, http.MethodGet), path: strings.Clone(f.path),
		query: strings.Clone(f.query), remote: strings.Clone(f.remote), proto: constant(f.proto, "HTTP/1.1")}
	x.ri.DropBody()
	x.r = nil
}

// constant returns c when s equals it, else a copy of s.
func constant(s, c string) string {
	if s == c {
		return c
	}
	return strings.Clone(s)
}

// fields returns the request's log fields: from the request, or those kept by detach.
func (x *exchange) fields() requestFields {
	if x.r == nil {
		return *x.det
	}
	l := requestFields{method: x.r.Method, remote: x.r.RemoteAddr, proto: x.r.Proto}
	if u := x.r.URL; u.Opaque == "" && !u.ForceQuery {
		l.path, l.query = u.EscapedPath(), u.RawQuery
		if l.path == "" {
			l.path = "/"
		}
	} else {
		l.path = u.RequestURI()
	}
	return l
}

// release drops one hold on x and finishes it with the last.
func (x *exchange) release() {
	if x.pending.Add(-1) == 0 {
		x.finish()
	}
}

func (x *exchange) finish() {
	now := time.Now()
	d := now.Sub(x.start)
	status, n := x.status, x.bytes.Load()
	if status == 0 {
		status = http.StatusOK
	}
	l := requestLine{requestFields: x.fields()}
	if m := x.o.m; m != nil {
		s := m.series.get(seriesKey{route: routeLabel(x.ri.Route, x.mode), method: l.method, status: status})
		s.dur.Observe(d.Seconds())
		s.bytes.Add(float64(n))
		if x.mode != "" {
			m.liveGauge(x.mode).Dec()
		}
		if l.method == http.MethodPost && status < 300 && (x.ri.Route == "stream" || x.ri.Route == "append_batch") {
			m.appends.Inc()
			m.appendBytes.Add(float64(x.ri.BodyBytes))
		}
	}
	if x.o.log != nil {
		l.time, l.status, l.bytes, l.duration, l.code, l.live = now, status, n, d, x.ri.Code, x.mode
		logRequest(x.o.log, &l)
	}
	x.recycle()
}

// recycle puts x back in the pool, unless its connection was hijacked.
func (x *exchange) recycle() {
	if x.hijacked {
		return
	}
	*x = exchange{rec: recorder{x: x}}
	exchanges.Put(x)
}

// routeLabel is the route label of a request: its route ("none" for no resource), with
// the live mode for live reads ("stream_sse", "stream_long_poll").
func routeLabel(route, mode string) string {
	switch {
	case route == "":
		route = "none"
	case mode == "":
		return route
	case route == "stream" && mode == "sse":
		return "stream_sse" // the live reads there are: no string built per request
	case route == "stream":
		return "stream_long_poll"
	}
	if mode != "" {
		route += "_" + strings.ReplaceAll(mode, "-", "_")
	}
	return route
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
