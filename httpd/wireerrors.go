package httpd

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/dsd-project/dsd/model"
)

// JSONErrorListener wraps a cleartext HTTP/1 listener so that the errors net/http writes
// by itself, before any handler runs (a request line or header it cannot parse: 400, 431,
// 501), carry the D7 JSON error body like every other error instead of Go's text/plain
// one. net/http offers no hook for them (conn.serve writes a constant response straight
// to the connection and closes it); that write is recognized by its exact form, which no
// handler's response has (those carry Date and Content-Length). TLS connections cannot be
// wrapped this way (net/http needs the *tls.Conn itself) and HTTP/2 resets such streams
// without a response: CONFORMANCE.md, "Requests net/http refuses".
func JSONErrorListener(ln net.Listener) net.Listener { return errListener{ln} }

type errListener struct{ net.Listener }

func (l errListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &errConn{Conn: c, capture: true}, nil
}

// maxCapturedLine bounds the request line kept for naming what is wrong with it.
const maxCapturedLine = 2048

// errConn keeps the first line read since its last write (the request line of the
// request net/http reads next, for a client that waits for each response) and rewrites
// net/http's own error responses.
type errConn struct {
	net.Conn
	mu      sync.Mutex
	line    []byte
	capture bool // still reading that line
}

// NetConn returns the wrapped connection (httpd's tcpOf unwraps through it).
func (c *errConn) NetConn() net.Conn { return c.Conn }

func (c *errConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.note(p[:n])
	}
	return n, err
}

func (c *errConn) note(b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.capture {
		return
	}
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b, c.capture = b[:i], false
	}
	if room := maxCapturedLine - len(c.line); len(b) > room {
		b, c.capture = b[:room], false
	}
	c.line = append(c.line, b...)
}

func (c *errConn) Write(p []byte) (int, error) {
	status, text, ok := goErrorResponse(p)
	if !ok {
		c.mu.Lock()
		c.line, c.capture = c.line[:0], true
		c.mu.Unlock()
		return c.Conn.Write(p)
	}
	c.mu.Lock()
	line := string(bytes.TrimSuffix(c.line, []byte("\r")))
	c.mu.Unlock()
	if _, err := c.Conn.Write(rawErrorResponse(wireError(status, text, line))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// goErrors is the header block of net/http's own error responses (conn.serve).
const goErrors = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// goErrorResponse recognizes a response net/http wrote itself: "HTTP/1.1 {status}" +
// goErrors + a one-line text, in one write. It returns the status and the text after
// "{code} {reason}: " when there is one.
func goErrorResponse(p []byte) (status int, text string, ok bool) {
	const proto = "HTTP/1.1 "
	if len(p) > 1024 || len(p) < len(proto)+3 || (p[len(proto)] != '4' && p[len(proto)] != '5') ||
		!bytes.HasPrefix(p, []byte(proto)) {
		return 0, "", false // most writes: bodies, 2xx heads
	}
	i := bytes.Index(p, []byte(goErrors))
	if i < 0 || bytes.ContainsAny(p[i+len(goErrors):], "\r\n") {
		return 0, "", false
	}
	line := string(p[len(proto):i])
	if len(line) < 3 {
		return 0, "", false
	}
	status, err := strconv.Atoi(line[:3])
	if err != nil || status < 400 || status > 599 {
		return 0, "", false
	}
	if _, after, found := strings.Cut(line, ": "); found {
		text = after
	}
	return status, text, true
}

// wireError is the protocol error for a request net/http refused with status; text is
// its reason when net/http gave one, line the captured request line.
func wireError(status int, text, line string) error {
	switch {
	case status == http.StatusRequestHeaderFieldsTooLarge:
		return model.ErrHeaderTooLarge
	case status == http.StatusNotImplemented:
		return model.ErrBadTransferCoding
	case text != "":
		return &model.Detailed{Base: model.ErrMalformedRequest, Msg: "the request is not valid HTTP/1.1: " + text}
	}
	return requestLineError(line)
}

// requestLineError names what is wrong with a request line whose target does not parse,
// or is ErrMalformedRequest when the line does not show it.
func requestLineError(line string) error {
	method, rest, ok1 := strings.Cut(line, " ")
	target, _, ok2 := strings.Cut(rest, " ")
	if !ok1 || !ok2 || method == "" {
		return model.ErrMalformedRequest
	}
	_, err := url.ParseRequestURI(target)
	var ue *url.Error
	if !errors.As(err, &ue) {
		return model.ErrMalformedRequest
	}
	if len(target) > 200 {
		target = target[:200] + "..."
	}
	return &model.Detailed{Base: model.ErrMalformedRequest, Msg: fmt.Sprintf(
		"the request target %q does not parse (%v): percent-escape '%%' as %%25, and write every escape as %% and two hex digits", target, ue.Err)}
}

// rawErrorResponse renders err as a whole HTTP/1.1 response that closes the connection,
// through writeError, with the headers every response carries.
func rawErrorResponse(err error) []byte {
	w := &rawWriter{h: http.Header{}}
	r := &http.Request{Method: http.MethodGet, URL: &url.URL{Path: "/"}, Header: http.Header{}}
	setCommonHeaders(w.h, r)
	writeError(w, r, err)
	w.h.Set("Connection", "close")
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\n", w.status, http.StatusText(w.status))
	_ = w.h.Write(&b)
	b.WriteString("\r\n")
	b.Write(w.body.Bytes())
	return b.Bytes()
}

// rawWriter is the http.ResponseWriter rawErrorResponse renders into.
type rawWriter struct {
	h      http.Header
	status int
	body   bytes.Buffer
}

func (w *rawWriter) Header() http.Header { return w.h }
func (w *rawWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}
func (w *rawWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.body.Write(p)
}
