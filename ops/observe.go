package ops

import (
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
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
// finished when the handler returns, and reused (exchanges); a response on a hijacked
// connection (SSE, httpd/ssehijack.go) is finished by its observedConn instead, when the
// connection closes.
type exchange struct {
	o        *observer
	r        *http.Request
	rec      recorder
	ri       httpd.RequestInfo
	start    time.Time
	mode     string // live mode: "sse", "long-poll" or ""
	status   int
	bytes    int64
	hijacked bool
}

var exchanges = sync.Pool{New: func() any { x := new(exchange); x.rec.x = x; return x }}

func (o *observer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	x := exchanges.Get().(*exchange)
	x.o, x.start, x.mode = o, time.Now(), liveMode(r)
	x.r = r // the handler finds x.ri through x.rec (httpd.RequestInfoWriter): no request copy
	if x.mode != "" && o.m != nil {
		o.m.liveGauge(x.mode).Inc()
	}
	x.rec.ResponseWriter = w
	defer x.handlerDone() // also when the handler panics (http.ErrAbortHandler)
	o.next.ServeHTTP(&x.rec, x.r)
}

// handlerDone finishes x, unless its connection was hijacked (its observedConn finishes
// it), and puts it back in the pool: nothing of it stays pinned while a hijacked
// connection lives (issue 19: 10,000 idle subscribers in <= 1 KiB each).
func (x *exchange) handlerDone() {
	if !x.hijacked {
		x.o.record(x.fields(), x.outcome(), x.bytes)
	}
	*x = exchange{rec: recorder{x: x}}
	exchanges.Put(x)
}

// outcome is what the log line and the metrics say of an exchange besides the request's
// fields and the bytes written.
type outcome struct {
	start     time.Time
	mode      string
	route     string
	code      string
	status    int
	bodyBytes int64
}

func (x *exchange) outcome() outcome {
	return outcome{start: x.start, mode: x.mode, route: x.ri.Route, code: x.ri.Code, status: x.status, bodyBytes: x.ri.BodyBytes}
}

// hijackedConn wraps conn, just hijacked from x's request, in the observedConn that
// finishes the exchange when it closes. It keeps a copy of the request's log fields (in
// one allocation) and of x's outcome: neither the request, nor its header map, body and
// contexts, nor the request line, nor x stay pinned while the connection lives (a parked
// SSE subscriber). Called by Hijack, on the handler's goroutine.
func (x *exchange) hijackedConn(conn net.Conn) *observedConn {
	x.hijacked = true
	x.status = http.StatusOK // hijacking handlers write their own 200 head
	return &observedConn{Conn: conn, o: x.o, f: packFields(x.fields()), oc: x.outcome()}
}

// packedFields are requestFields copied into one string (a hijacked connection's).
type packedFields struct {
	s    string
	ends [4]uint32 // where method, path, query and remote end in s; proto follows
}

func packFields(f requestFields) packedFields {
	p := packedFields{s: f.method + f.path + f.query + f.remote + f.proto}
	n := 0
	for i, part := range [4]string{f.method, f.path, f.query, f.remote} {
		n += len(part)
		p.ends[i] = uint32(n)
	}
	return p
}

func (p *packedFields) fields() requestFields {
	e := p.ends
	return requestFields{method: p.s[:e[0]], path: p.s[e[0]:e[1]], query: p.s[e[1]:e[2]],
		remote: p.s[e[2]:e[3]], proto: p.s[e[3]:]}
}

// fields returns the request's log fields.
func (x *exchange) fields() requestFields {
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

// record writes the log line and updates the metrics of one finished exchange that wrote
// n bytes.
func (o *observer) record(f requestFields, oc outcome, n int64) {
	now := time.Now()
	d := now.Sub(oc.start)
	status := oc.status
	if status == 0 {
		status = http.StatusOK
	}
	if m := o.m; m != nil {
		s := m.series.get(seriesKey{route: routeLabel(oc.route, oc.mode), method: f.method, status: status})
		s.dur.Observe(d.Seconds())
		s.bytes.Add(float64(n))
		if oc.mode != "" {
			m.liveGauge(oc.mode).Dec()
		}
		if f.method == http.MethodPost && status < 300 && (oc.route == "stream" || oc.route == "append_batch") {
			m.appends.Inc()
			m.appendBytes.Add(float64(oc.bodyBytes))
		}
	}
	if o.log != nil {
		l := requestLine{requestFields: f, time: now, status: status, bytes: n, duration: d, code: oc.code, live: oc.mode}
		logRequest(o.log, &l)
	}
}

// routeLabel is the route label of a request: its route ("none" for no resource), with
// the live mode for live reads of a stream ("stream_sse", "stream_long_poll"). Only streams
// have live reads: a live parameter elsewhere (a listing ignores it, /bootstrap refuses it)
// keeps the route's label, so the label set stays the documented one.
func routeLabel(route, mode string) string {
	switch {
	case route == "":
		return "none"
	case route != "stream" || mode == "":
		return route
	case mode == "sse":
		return "stream_sse" // constants: no string built per request
	}
	return "stream_long_poll"
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
