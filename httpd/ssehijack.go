package httpd

import (
	"net"
	"net/http"
	"strconv"
	"time"
)

// sseConn is an SSE response on a hijacked HTTP/1.1 connection: dsd writes the response
// head and the chunked body itself, so that an idle subscriber costs no goroutine and no
// net/http buffers (issue 9: 10,000 idle subscribers in bounded memory).
type sseConn struct {
	conn net.Conn
	wdl  time.Time // the write deadline currently set
}

// hijackSSE takes over the connection of an HTTP/1.1 request and writes the response head
// with w's headers. hijacked is false (and w untouched) when the connection cannot be
// hijacked (HTTP/2, test recorders, HTTP/1.0): the caller then serves through w. A nil
// conn with hijacked true means the connection failed and is closed.
func hijackSSE(w http.ResponseWriter, r *http.Request) (c *sseConn, hijacked bool) {
	hj, ok := w.(http.Hijacker)
	if !ok || r.ProtoMajor != 1 || r.ProtoMinor != 1 {
		return nil, false
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return nil, false
	}
	// Bytes already read past this request (a pipelined request, a stray CRLF, a GET body)
	// are dropped: the response says Connection: close, so a client retries what it
	// pipelined (RFC 9112 §9.3.2) and this request is still answered.
	head := make([]byte, 0, 1024)
	head = append(head, "HTTP/1.1 200 OK\r\n"...)
	h := w.Header().Clone()
	h.Set("Transfer-Encoding", "chunked")
	h.Set("Connection", "close")
	h.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	b := bufWriter{b: head}
	_ = h.Write(&b)
	b.b = append(b.b, "\r\n"...)
	conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Write(b.b); err != nil {
		conn.Close()
		return nil, true
	}
	return &sseConn{conn: conn}, true
}

type bufWriter struct{ b []byte }

func (w *bufWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// chunk frames payload as one HTTP/1.1 chunk.
func chunk(payload []byte) []byte {
	out := make([]byte, 0, len(payload)+12)
	out = strconv.AppendInt(out, int64(len(payload)), 16)
	out = append(out, '\r', '\n')
	out = append(out, payload...)
	return append(out, '\r', '\n')
}

// lastChunk ends a chunked body.
var lastChunk = []byte("0\r\n\r\n")

// write sends bytes already framed as chunks, giving up after between timeout/2 and
// timeout: the deadline is moved when less than half of it is left (which spares most
// writes of a busy subscriber a deadline update) or when it lies further than timeout
// (a longer catch-up deadline must not outlive the catch-up). n is what was written; after
// a timeout (os.ErrDeadlineExceeded) the rest may still be written with a new deadline.
func (c *sseConn) write(framed []byte, timeout time.Duration) (n int, err error) {
	if now := time.Now(); c.wdl.Sub(now) < timeout/2 || c.wdl.Sub(now) > timeout {
		c.wdl = now.Add(timeout)
		c.conn.SetWriteDeadline(c.wdl)
	}
	return c.conn.Write(framed)
}

// sseFinishTimeout bounds the write of the final chunk: a subscriber that cannot take
// five bytes is cut rather than waited for.
const sseFinishTimeout = 20 * time.Millisecond

// finish ends the response properly and closes the connection.
func (c *sseConn) finish() {
	c.conn.SetWriteDeadline(time.Now().Add(sseFinishTimeout))
	_, _ = c.conn.Write(lastChunk)
	c.conn.Close()
}

// abort closes the connection without ending the body (the client sees a cut response
// and reconnects from its last control event).
func (c *sseConn) abort() { c.conn.Close() }
