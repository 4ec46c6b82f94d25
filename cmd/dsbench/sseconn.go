package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// sseHeaderTimeout bounds a polled subscriber's dial, request and response header.
const sseHeaderTimeout = 30 * time.Second

// polledConn is one SSE response read by an ssePoller: its socket, body framing and event
// parser. The poller owns it from add until it sends the outcome on done.
type polledConn struct {
	fd   int
	s    *subscriber
	body httpBody
	sse  sseParser
	done chan error // the response's outcome (io.EOF: it ended), sent once
}

// feed parses bytes of the response received at at and hands its events to the subscriber.
// done says the response is over: its body ended (err io.EOF), the stream closed (nil), or
// err says why not.
func (c *polledConn) feed(p []byte, at time.Time) (done bool, err error) {
	for len(p) > 0 {
		data, n, end, err := c.body.Next(p)
		p = p[n:]
		if err != nil {
			return true, err
		}
		for len(data) > 0 {
			ev, m, ok := c.sse.Next(data)
			data = data[m:]
			if !ok {
				break
			}
			if stop, err := c.s.handle(ev, at); stop || err != nil {
				return true, err
			}
		}
		if end {
			return true, errEndOfBody
		}
	}
	return false, nil
}

// errEndOfBody is the outcome of a response whose body ended.
var errEndOfBody = errors.New("SSE response ended")

// followPolled is follow through s.Poller: it connects on this goroutine, then waits while the
// poller reads the response, or until ctx ends.
func (s *subscriber) followPolled(ctx context.Context) (got bool, err error) {
	c, pre, err := s.connectRaw(ctx)
	if err != nil {
		return false, err
	}
	if done, err := c.feed(pre, time.Now()); done {
		closeSocket(c.fd)
		return s.resp.got, s.endResponse(err)
	}
	if err := s.Poller.add(c); err != nil {
		closeSocket(c.fd)
		return s.resp.got, s.endResponse(err)
	}
	select {
	case err = <-c.done:
	case <-ctx.Done():
		s.Poller.cancel(c)
		err = <-c.done
	}
	return s.resp.got, s.endResponse(err)
}

// connectRaw dials s.URL (http:// only), sends the SSE request and reads the response header
// on a connection of its own. For a 200 response it returns the socket, duplicated out of
// the net.Conn (closed: the runtime's netpoller no longer watches it), with its framing,
// and the body bytes read with the header.
func (s *subscriber) connectRaw(ctx context.Context) (c *polledConn, pre []byte, err error) {
	u, err := url.Parse(s.requestURL())
	if err != nil || u.Scheme != "http" {
		return nil, nil, fmt.Errorf("polled subscriber: %q is not an http:// URL (%v)", s.URL, err)
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "80")
	}
	conn, err := (&net.Dialer{Timeout: 10 * time.Second}).DialContext(ctx, "tcp", host)
	if err != nil {
		s.Statuses.Inc(0, err)
		return nil, nil, err
	}
	defer conn.Close()
	resp, br, err := sseRoundTrip(ctx, conn, u)
	if err != nil {
		s.Statuses.Inc(0, err)
		return nil, nil, err
	}
	s.Statuses.Inc(resp.StatusCode, nil)
	if resp.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	chunked := len(resp.TransferEncoding) > 0 && resp.TransferEncoding[len(resp.TransferEncoding)-1] == "chunked"
	if len(resp.TransferEncoding) > 0 && !chunked {
		return nil, nil, fmt.Errorf("polled subscriber: transfer coding %q", resp.TransferEncoding)
	}
	fd, err := socketOf(conn)
	if err != nil {
		return nil, nil, err
	}
	s.beginResponse(resp.Header)
	held, _ := br.Peek(br.Buffered())
	c = &polledConn{fd: fd, s: s, body: newHTTPBody(chunked, resp.ContentLength), done: make(chan error, 1)}
	return c, held, nil
}

// sseRoundTrip writes the GET for u on conn and reads the response header, within
// sseHeaderTimeout or until ctx ends. The returned reader holds the body bytes read with it.
func sseRoundTrip(ctx context.Context, conn net.Conn, u *url.URL) (*http.Response, *bufio.Reader, error) {
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	conn.SetDeadline(time.Now().Add(sseHeaderTimeout))
	req := "GET " + u.RequestURI() + " HTTP/1.1\r\nHost: " + u.Host +
		"\r\nUser-Agent: dsbench\r\nAccept: text/event-stream\r\n\r\n"
	if _, err := conn.Write([]byte(req)); err != nil {
		return nil, nil, err
	}
	br := bufio.NewReaderSize(conn, 4<<10)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	return resp, br, nil
}

// socketOf duplicates conn's descriptor, to be read without the runtime's netpoller once
// conn is closed (the duplicate keeps the socket open; it stays non-blocking).
func socketOf(conn net.Conn) (int, error) {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return 0, fmt.Errorf("polled subscriber: %T has no descriptor", conn)
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return 0, err
	}
	fd, derr := -1, error(nil)
	if err := raw.Control(func(f uintptr) { fd, derr = dupSocket(f) }); err != nil {
		return 0, err
	}
	return fd, derr
}

// pollable reports whether subscribers of streamURL can be read by an ssePoller.
func pollable(streamURL string) bool { return strings.HasPrefix(streamURL, "http://") }
