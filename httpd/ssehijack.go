package httpd

import (
	"bytes"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// sseConn is an SSE response on a hijacked HTTP/1.1 connection: dsd writes the response
// head and the chunked body itself, so that an idle subscriber costs no goroutine and no
// net/http buffers (issue 9: 10,000 idle subscribers in bounded memory).
type sseConn struct {
	conn   net.Conn
	wdl    time.Time // the write deadline currently set
	stalls *stallSet // the live-buffer budget its blocked writes count in
}

// hijackSSE takes over the connection of an HTTP/1.1 request, bounds its kernel send
// buffer to sndbuf bytes (issue 20: a reader that does not read pins at most that in the
// kernel), and writes the response head with w's headers. hijacked is false (and w
// untouched) when the connection cannot be hijacked (HTTP/2, test recorders, HTTP/1.0):
// the caller then serves through w. A nil conn with hijacked true means the connection
// failed and is closed.
func hijackSSE(w http.ResponseWriter, r *http.Request, stalls *stallSet, sndbuf int) (c *sseConn, hijacked bool) {
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
	if tc := tcpOf(conn); tc != nil && sndbuf > 0 {
		_ = tc.SetWriteBuffer(sndbuf)
	}
	c = &sseConn{conn: conn, stalls: stalls}
	if _, err := c.write(b.b, 10*time.Second); err != nil {
		c.reset()
		return nil, true
	}
	return c, true
}

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

// sendHeld writes rest as a stall of held bytes, for at most timeout.
func (c *sseConn) sendHeld(rest []byte, held int, timeout time.Duration) error {
	st := c.stalls.hold(held, c.reset)
	_, err := c.write(rest, timeout)
	c.stalls.release(st)
	return err
}

// finish ends the response properly and closes the connection; a socket that cannot take
// the last chunk is reset instead.
func (c *sseConn) finish() {
	c.conn.SetWriteDeadline(time.Now().Add(sseFinishTimeout))
	if _, err := c.conn.Write(lastChunk); err != nil {
		c.reset()
		return
	}
	c.conn.Close()
}

// abort resets the connection without ending the body (the client sees a cut response
// and reconnects from its last control event).
func (c *sseConn) abort() { c.reset() }

// reset closes the connection with SO_LINGER 0: the kernel sends RST and frees the send
// queue at once, instead of keeping it as an orphan toward a reader that does not read.
// Safe while another goroutine writes (its write fails).
func (c *sseConn) reset() {
	lingerOff(c.conn)
	c.conn.Close()
}
