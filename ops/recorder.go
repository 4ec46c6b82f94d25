package ops

import (
	"bufio"
	"net"
	"net/http"
	"sync/atomic"

	"github.com/dsd-project/dsd/httpd"
)

// recorder is the ResponseWriter the protocol handler sees: it notes the status and counts
// body bytes, and keeps flushing, deadlines (Unwrap) and hijacking working.
type recorder struct {
	http.ResponseWriter
	x *exchange
}

func (w *recorder) WriteHeader(code int) {
	if w.x.status == 0 && code >= 200 {
		w.x.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *recorder) Write(p []byte) (int, error) {
	if w.x.status == 0 {
		w.x.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(p)
	w.x.bytes += int64(n)
	return n, err
}

// FlushError is what http.ResponseController.Flush calls.
func (w *recorder) FlushError() error { return http.NewResponseController(w.ResponseWriter).Flush() }

// Flush implements http.Flusher.
func (w *recorder) Flush() { _ = w.FlushError() }

// RequestInfo is what the protocol handler fills in for the log and the metrics
// (httpd.RequestInfoWriter).
func (w *recorder) RequestInfo() *httpd.RequestInfo { return &w.x.ri }

// Unwrap gives http.ResponseController the underlying writer (deadlines).
func (w *recorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Hijack implements http.Hijacker. The exchange then ends when the connection closes
// (an SSE response parked in its stream's hub outlives its handler).
func (w *recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	return w.x.hijackedConn(conn), rw, nil
}

// observedConn counts what is written to a hijacked connection and finishes its exchange
// when closed (exchange.hijackedConn).
type observedConn struct {
	net.Conn
	o      *observer
	f      packedFields
	oc     outcome
	bytes  atomic.Int64
	closed atomic.Bool
}

func (c *observedConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.bytes.Add(int64(n))
	return n, err
}

// NetConn returns the connection underneath (socket options: SO_LINGER, SO_SNDBUF).
func (c *observedConn) NetConn() net.Conn { return c.Conn }

// SetNetConn replaces the connection underneath with one on the same socket (dsd parks an
// idle SSE connection's socket outside Go's netpoller, httpd/fdconn_unix.go); the exchange
// still counts what is written and ends when it is closed.
func (c *observedConn) SetNetConn(n net.Conn) { c.Conn = n }

func (c *observedConn) Close() error {
	err := c.Conn.Close()
	if c.closed.CompareAndSwap(false, true) {
		c.o.record(c.f.fields(), c.oc, c.bytes.Load())
	}
	return err
}
