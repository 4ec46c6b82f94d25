package httpd

import (
	"net"
	"sync"
	"time"
)

// sseConn is an SSE response on a hijacked HTTP/1.1 connection: dsd writes the response
// head and the chunked body itself, so that an idle subscriber costs no goroutine and no
// net/http buffers (issue 9: 10,000 idle subscribers in bounded memory). It lives inside
// its sseSub; parked in a hub, its socket leaves Go's netpoller (park, issue 19).
//
// One goroutine at a time owns it (catch-up, hub, resume) and writes; reset may come from
// any goroutine (the live-buffer budget cuts a blocked write). mu orders a reset with the
// owner's park, unpark and parked writes, so a descriptor is never closed under a write
// that could then reach another connection reusing its number.
type sseConn struct {
	mu     sync.Mutex
	conn   net.Conn
	wdl    int64 // the write deadline currently set, in monoNow nanoseconds
	parked bool  // the socket under conn is fdc: writes never wait (park)
	closed bool
	fdc    fdConn // the parked socket (Unix)
}

// lastChunk ends a chunked body.
var lastChunk = []byte("0\r\n\r\n")

// write sends bytes already framed as chunks, giving up after between timeout/2 and
// timeout: the deadline is moved when less than half of it is left (which spares most
// writes of a busy subscriber a deadline update) or when it lies further than timeout
// (a longer catch-up deadline must not outlive the catch-up). n is what was written; after
// a timeout (os.ErrDeadlineExceeded) the rest may still be written with a new deadline.
//
// A parked connection's write does not wait at all: it returns os.ErrDeadlineExceeded at
// once when the socket buffer is full.
func (c *sseConn) write(framed []byte, timeout time.Duration) (n int, err error) {
	if c.parked {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.closed {
			return 0, net.ErrClosed
		}
		return c.conn.Write(framed)
	}
	now := time.Now()
	mono := monoOf(now)
	if left := time.Duration(c.wdl - mono); left < timeout/2 || left > timeout {
		c.wdl = mono + int64(timeout)
		c.conn.SetWriteDeadline(now.Add(timeout))
	}
	return c.conn.Write(framed)
}

// sseFinishTimeout bounds the write of the final chunk: a subscriber that cannot take
// five bytes is cut rather than waited for (parked, at once).
const sseFinishTimeout = 20 * time.Millisecond

// sendHeld writes rest as a stall of held bytes in stalls, for at most timeout.
func (c *sseConn) sendHeld(stalls *stallSet, rest []byte, held int, timeout time.Duration) error {
	st := stalls.hold(held, c.reset)
	_, err := c.write(rest, timeout)
	stalls.release(st)
	return err
}

// finish ends the response properly and closes the connection; a socket that cannot take
// the last chunk is reset instead.
func (c *sseConn) finish() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	if !c.parked {
		c.conn.SetWriteDeadline(time.Now().Add(sseFinishTimeout))
	}
	if _, err := c.conn.Write(lastChunk); err != nil {
		c.resetLocked()
		return
	}
	c.closed = true
	c.conn.Close()
}

// abort resets the connection without ending the body (the client sees a cut response
// and reconnects from its last control event).
func (c *sseConn) abort() { c.reset() }

// reset closes the connection with SO_LINGER 0: the kernel sends RST and frees the send
// queue at once, instead of keeping it as an orphan toward a reader that does not read.
// Safe while another goroutine writes (its write fails).
func (c *sseConn) reset() {
	c.mu.Lock()
	c.resetLocked()
	c.mu.Unlock()
}

func (c *sseConn) resetLocked() {
	if c.closed {
		return
	}
	c.closed = true
	c.lingerOff()
	c.conn.Close()
}
