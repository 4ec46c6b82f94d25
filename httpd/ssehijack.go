package httpd

import (
	"bytes"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// hijackSSE takes over the connection of an HTTP/1.1 request into c, bounds its kernel send
// buffer to sndbuf bytes (issue 20: a reader that does not read pins at most that in the
// kernel), and writes the response head with w's headers. hijacked is false (and w
// untouched) when the connection cannot be hijacked (HTTP/2, test recorders, HTTP/1.0):
// the caller then serves through w. A non-nil err with hijacked true means the connection
// failed and is closed.
func hijackSSE(c *sseConn, w http.ResponseWriter, r *http.Request, sndbuf int) (hijacked bool, err error) {
	hj, ok := w.(http.Hijacker)
	if !ok || r.ProtoMajor != 1 || r.ProtoMinor != 1 {
		return false, nil
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return false, nil
	}
	conn = dropErrConn(conn)
	// Bytes already read past this request (a pipelined request, a stray CRLF, a GET body)
	// are dropped: the response says Connection: close, so a client retries what it
	// pipelined (RFC 9112 §9.3.2) and this request is still answered.
	b := bufWriter{b: make([]byte, 0, 512)}
	b.b = append(b.b, "HTTP/1.1 200 OK\r\n"...)
	_ = w.Header().WriteSubset(&b, sseOwnHeaders)
	b.b = append(b.b, "Transfer-Encoding: chunked\r\nConnection: close\r\nDate: "...)
	b.b = time.Now().UTC().AppendFormat(b.b, http.TimeFormat)
	b.b = append(b.b, "\r\n\r\n"...)
	if tc := tcpOf(conn); tc != nil && sndbuf > 0 {
		_ = tc.SetWriteBuffer(sndbuf)
	}
	c.conn = conn
	if _, err := c.write(b.b, 10*time.Second); err != nil {
		c.reset()
		return true, err
	}
	return true, nil
}

// dropErrConn removes JSONErrorListener's wrapper from a hijacked connection's wrappers:
// net/http writes nothing more to it, and parking needs the socket right under the
// replaceable wrappers (fdconn_unix.go). Returns the connection to use.
func dropErrConn(conn net.Conn) net.Conn {
	if e, ok := conn.(*errConn); ok {
		return e.Conn
	}
	for cur := conn; ; {
		w, ok := cur.(netConnSetter)
		if !ok {
			return conn
		}
		if e, ok := w.NetConn().(*errConn); ok {
			w.SetNetConn(e.Conn)
			return conn
		}
		cur = w.NetConn()
	}
}

// netConnSetter is a wrapper of a hijacked connection that lets the connection under it
// be replaced (ops' observed connection, which counts what is written and logs the close).
type netConnSetter interface {
	NetConn() net.Conn
	SetNetConn(net.Conn)
}

// sseOwnHeaders are the fields hijackSSE writes itself.
var sseOwnHeaders = map[string]bool{"Transfer-Encoding": true, "Connection": true, "Date": true}

type bufWriter struct{ b []byte }

func (w *bufWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// chunkReserve is the room left before a payload for its chunk header (frameChunk).
const chunkReserve = 18

// newChunkBuf returns a buffer for one chunk's payload, with room for its header.
func newChunkBuf(b *bytes.Buffer) *bytes.Buffer {
	if b == nil {
		b = new(bytes.Buffer)
	}
	b.Reset()
	b.Write(make([]byte, chunkReserve))
	return b
}

// frameChunk frames the payload written to b after newChunkBuf as one HTTP/1.1 chunk, in
// place (no copy of the payload), and returns the framed bytes.
func frameChunk(b *bytes.Buffer) []byte {
	n := b.Len() - chunkReserve
	b.WriteString("\r\n")
	var hdr [chunkReserve]byte
	h := append(strconv.AppendInt(hdr[:0], int64(n), 16), '\r', '\n')
	out := b.Bytes()[chunkReserve-len(h):]
	copy(out, h)
	return out
}

// chunkPool recycles the catch-up buffers of SSE responses (at most maxPooledChunk each).
var chunkPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledChunk = 256 << 10

func putChunkBuf(b *bytes.Buffer) {
	if b.Cap() <= maxPooledChunk {
		chunkPool.Put(b)
	}
}
