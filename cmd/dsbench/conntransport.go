package main

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"time"
)

// connTransport is an http.RoundTripper over one keep-alive HTTP/1.1 connection, used by one
// closed-loop writer at a time. It writes the request and reads the response in the
// caller's goroutine (net/http's Transport hands each request to two goroutines of its
// own), so the generator spends less CPU per request on the cores it shares with the
// server. The connection is dialled on first use, and again after any error or a response
// that closes it. Timeout bounds each round trip through the connection's deadline.
type connTransport struct {
	Timeout time.Duration
	conn    net.Conn
	br      *bufio.Reader
	bw      *bufio.Writer
	busy    bool // a response body is still open
}

var errConnBusy = errors.New("connTransport: previous response body not closed")

// RoundTrip sends req (http or plain host:port URLs only) and returns its response; the
// caller must read and close the body before the next request.
func (t *connTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.busy {
		return nil, errConnBusy
	}
	if t.conn == nil {
		if err := t.dial(req); err != nil {
			return nil, err
		}
	}
	if t.Timeout > 0 {
		t.conn.SetDeadline(time.Now().Add(t.Timeout))
	}
	if err := req.Write(t.bw); err != nil {
		t.drop()
		return nil, err
	}
	if err := t.bw.Flush(); err != nil {
		t.drop()
		return nil, err
	}
	resp, err := http.ReadResponse(t.br, req)
	if err != nil {
		t.drop()
		return nil, err
	}
	t.busy = true
	resp.Body = &connBody{ReadCloser: resp.Body, t: t, reuse: !resp.Close}
	return resp, nil
}

func (t *connTransport) dial(req *http.Request) error {
	host := req.URL.Host
	if req.URL.Port() == "" {
		host = net.JoinHostPort(req.URL.Hostname(), "80")
	}
	c, err := net.DialTimeout("tcp", host, 10*time.Second)
	if err != nil {
		return err
	}
	t.conn, t.br, t.bw = c, bufio.NewReaderSize(c, 16<<10), bufio.NewWriterSize(c, 16<<10)
	return nil
}

func (t *connTransport) drop() {
	if t.conn != nil {
		t.conn.Close()
	}
	t.conn, t.busy = nil, false
}

// CloseIdleConnections closes the connection (http.Client calls it on CloseIdleConnections).
func (t *connTransport) CloseIdleConnections() { t.drop() }

// connBody releases the connection for the next request once the body is read to its end
// and closed; a body closed early, or a failed read, drops the connection.
type connBody struct {
	io.ReadCloser
	t         *connTransport
	reuse     bool
	eof       bool
	done      bool
	discarded bool // read at the socket by discardBody: the inner body must not read on
}

func (b *connBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.eof = true
	} else if err != nil {
		b.reuse = false
	}
	return n, err
}

func (b *connBody) Close() error {
	if b.done {
		return nil
	}
	b.done = true
	var err error
	if !b.discarded {
		err = b.ReadCloser.Close()
	}
	b.t.busy = false
	if !b.eof || !b.reuse || err != nil {
		b.t.drop()
	}
	return err
}
