package httpd

import (
	"context"
	"net"
	"net/http"
	"time"
)

// minHeldWrite is the smallest response write accounted as a possible stall: smaller
// ones fit net/http's buffers and never block the handler.
const minHeldWrite = 4 << 10

// writeHeld writes p to a response served by net/http (catch-up, long-poll, SSE that is
// not hijacked), flushing when flush is set, as a possible stall: a write cut by the
// budget fails at once and the connection is reset.
func (h *Handler) writeHeld(w http.ResponseWriter, r *http.Request, p []byte, flush bool) error {
	rc := http.NewResponseController(w)
	if len(p) < minHeldWrite {
		_, err := w.Write(p)
		if err == nil && flush {
			err = rc.Flush()
		}
		return err
	}
	st := h.stalls.hold(len(p), func() {
		lingerOff(connOf(r.Context()))
		_ = rc.SetWriteDeadline(time.Now())
	})
	defer h.stalls.release(st)
	_, err := w.Write(p)
	if err == nil && flush {
		err = rc.Flush()
	}
	return err
}

// heldWriter writes a response body through writeHeld (bootstrap's parts).
type heldWriter struct {
	h *Handler
	w http.ResponseWriter
	r *http.Request
}

func (hw heldWriter) Write(p []byte) (int, error) {
	if err := hw.h.writeHeld(hw.w, hw.r, p, false); err != nil {
		return 0, err
	}
	return len(p), nil
}

type connKey struct{}

// ConnContext records each connection in its requests' contexts, so that a reader cut by
// the live-buffer budget has its socket reset (http.Server.ConnContext).
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

func connOf(ctx context.Context) net.Conn {
	c, _ := ctx.Value(connKey{}).(net.Conn)
	return c
}

// tcpOf returns the TCP connection under c (through TLS), or nil.
func tcpOf(c net.Conn) *net.TCPConn {
	for c != nil {
		switch v := c.(type) {
		case *net.TCPConn:
			return v
		case interface{ NetConn() net.Conn }:
			c = v.NetConn()
		default:
			return nil
		}
	}
	return nil
}

// lingerOff makes closing c reset it (SO_LINGER 0): the kernel drops its send queue at
// once instead of keeping it as an orphan toward a reader that does not read.
func lingerOff(c net.Conn) {
	if tc := tcpOf(c); tc != nil {
		_ = tc.SetLinger(0)
	}
}
