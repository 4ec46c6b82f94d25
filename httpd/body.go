package httpd

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/dsd-project/dsd/model"
)

// bodyPiece is the unit in which request bodies are read and held (issue 20): a body
// costs what has arrived, never its announced Content-Length up front.
const bodyPiece = 64 << 10

var piecePool = sync.Pool{New: func() any { return new([bodyPiece]byte) }}

// bodyPool holds reqBody values between requests (recycle).
var bodyPool = sync.Pool{New: func() any { return new(reqBody) }}

// reqBody is one request body being read (A-27: in full before anything commits), under
// the server's bounds: at most max bytes (else model.ErrTooLarge), bytes held counted in
// the global in-flight budget (else model.ErrBusy), and no more than BodyIdleTimeout
// without a byte nor BodyTimeout in all (else model.ErrBodyTimeout). close releases it.
type reqBody struct {
	h      *Handler
	w      http.ResponseWriter
	rc     http.ResponseController // a value: one allocation less per body
	src    io.ReadCloser           // the request's body, closed once read to its end
	max    int64                   // the most bytes it may have
	cl     int64                   // Content-Length, -1 when chunked
	pieces []*[bodyPiece]byte
	one    [1]*[bodyPiece]byte // pieces' storage for the usual one-piece body
	n      int                 // bytes read into pieces
	held   int64               // bytes taken from the budget
	eof    bool
	until  time.Time    // the whole body's deadline, from its first read (fill)
	ri     *RequestInfo // counts the bytes read, when a middleware asked (nil otherwise)
}

// openBody starts reading r's body. Errors: model.ErrTooLarge (Content-Length above max).
func (h *Handler) openBody(w http.ResponseWriter, r *http.Request, max int64) (*reqBody, error) {
	b := bodyPool.Get().(*reqBody)
	*b = reqBody{h: h, w: w, cl: r.ContentLength}
	if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
		b.eof = true
		return b, nil
	}
	if r.ContentLength > max {
		w.Header().Set("Connection", "close")
		return b, model.ErrTooLarge
	}
	b.src, b.max, b.ri = r.Body, max, requestInfo(w)
	b.pieces = b.one[:0]
	b.rc = *http.NewResponseController(w)
	return b, nil
}

// pending reports whether the request has a body: known from Content-Length, found for a
// chunked body by reading up to its first bytes.
func (b *reqBody) pending() (bool, error) {
	if b.cl > 0 || b.n > 0 {
		return true, nil
	}
	if b.eof {
		return false, nil
	}
	if err := b.fill(); err != nil {
		return false, b.refuse(err)
	}
	return b.n > 0, nil
}

// all reads the rest of the body and returns it in one buffer of its exact size (the
// engine may keep it); the pieces go back to the pool.
func (b *reqBody) all() ([]byte, error) {
	frame, err := b.framed()
	if len(frame) == 0 {
		return nil, err
	}
	return frame[1:], nil
}

// framed is all with one spare byte in front of the body (engine.AppendRequest.Frame: the
// engine stores it without copying the body); nil for an empty body.
func (b *reqBody) framed() ([]byte, error) {
	for !b.eof {
		if err := b.fill(); err != nil {
			return nil, b.refuse(err)
		}
	}
	if b.n == 0 {
		return nil, nil
	}
	out := make([]byte, 1+b.n)
	for i, p := range b.pieces {
		copy(out[1+i*bodyPiece:], p[:])
		piecePool.Put(p)
	}
	clear(b.pieces)
	b.pieces = b.pieces[:0]
	b.h.bodies.give(b.held - int64(b.n))
	b.held = int64(b.n)
	return out, nil
}

// fill reads into the last piece until it is full or the body ends, taking a new piece
// (and its bytes from the budget) when the last is full. It reads at most one byte past
// max, to tell a body of max bytes from a longer one (model.ErrTooLarge).
func (b *reqBody) fill() error {
	off := b.n % bodyPiece
	if off == 0 {
		if !b.h.bodies.take(bodyPiece) {
			return model.ErrBusy
		}
		b.held += bodyPiece
		b.pieces = append(b.pieces, piecePool.Get().(*[bodyPiece]byte))
	}
	p := b.pieces[len(b.pieces)-1]
	for off < bodyPiece {
		now := time.Now()
		if b.until.IsZero() { // the first read: one clock reading less per body
			b.until = now.Add(b.h.cfg.BodyTimeout)
		}
		_ = b.rc.SetReadDeadline(minTime(now.Add(b.h.cfg.BodyIdleTimeout), b.until))
		room := p[off:]
		if left := b.max + 1 - int64(b.n); int64(len(room)) > left {
			room = room[:left]
		}
		k, err := b.src.Read(room)
		off += k
		b.n += k
		if b.ri != nil {
			b.ri.BodyBytes += int64(k)
		}
		if int64(b.n) > b.max {
			return model.ErrTooLarge
		}
		if err == io.EOF {
			b.done()
			return nil
		}
		if err != nil {
			return bodyError(err)
		}
	}
	return nil
}

// done marks the body read, closes it (net/http then skips its own discarding read of
// the rest after the handler) and lifts the read deadline (net/http sets its own for the
// connection's next request).
func (b *reqBody) done() {
	b.eof = true
	_ = b.src.Close()
	_ = b.rc.SetReadDeadline(time.Time{})
}

// refuse returns err, and asks the connection to close when the body was not read to its
// end: the client need not send it, and what it sends is not read.
func (b *reqBody) refuse(err error) error {
	if !b.eof {
		b.w.Header().Set("Connection", "close")
	}
	return err
}

// close gives the held bytes back; the pieces of an unfinished body go back to the pool.
func (b *reqBody) close() {
	for _, p := range b.pieces {
		piecePool.Put(p)
	}
	clear(b.pieces)
	b.pieces = b.pieces[:0]
	b.h.bodies.give(b.held)
	b.held = 0
}

// recycle closes b and puts it back in the pool: b must not be used afterwards.
func (b *reqBody) recycle() {
	b.close()
	*b = reqBody{}
	bodyPool.Put(b)
}

// readBody reads a whole request body of at most max bytes. exists, when set, is asked
// before a pending body is read, so that a request to a missing stream is answered at
// once. done must be called when the request is answered.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request, max int64, exists func() error) (data []byte, done func(), err error) {
	b, err := h.openBody(w, r, max)
	if err != nil {
		return nil, b.close, err
	}
	if exists != nil {
		pending, err := b.pending()
		if err != nil {
			return nil, b.close, err
		}
		if pending {
			if err := exists(); err != nil {
				return nil, b.close, b.refuse(err)
			}
		}
	}
	data, err = b.all()
	return data, b.close, err
}

// streamExists is the check before a body to key is read: model.ErrStreamNotFound or
// model.ErrStreamGone from a read-only lookup (no TTL restart, no commit); other errors
// are left to the request itself.
func (h *Handler) streamExists(key model.StreamKey) func() error {
	return func() error {
		_, err := h.store.Head(key)
		if errors.Is(err, model.ErrStreamNotFound) || errors.Is(err, model.ErrStreamGone) {
			return err
		}
		return nil
	}
}

func bodyError(err error) error {
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return model.ErrBodyTimeout
	}
	return fmt.Errorf("%w: %v", model.ErrBadBody, err)
}

func minTime(a time.Time, bs ...time.Time) time.Time {
	for _, b := range bs {
		if b.Before(a) {
			a = b
		}
	}
	return a
}
