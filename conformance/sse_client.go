package conformance

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// SSEConn is an open live=sse response being read event by event.
type SSEConn struct {
	// Resp holds the status and headers (Data stays empty: the body is streamed).
	Resp *Response

	cancel  context.CancelFunc
	chunks  chan []byte
	readErr chan error
	parser  SSEParser
	pending []Event
	ended   error

	mu  sync.Mutex
	raw bytes.Buffer
}

// errSSETimeout is returned by Next when no event arrives in time.
var errSSETimeout = errors.New("no SSE event within the wait")

// SSE opens GET ?offset=<offset>&live=sse. The connection closes when the spec ends (or
// with Close). It fails the spec on a transport error; the status is not checked.
func (st *Stream) SSE(offset string, opts ...Opt) *SSEConn {
	ginkgo.GinkgoHelper()
	ctx, cancel := context.WithCancel(st.s.Ctx)
	all := append(offsetOpts(offset), Q("live", "sse"))
	resp, _, err := st.s.open(ctx, "GET", st.URL, append(all, opts...)...)
	if err != nil {
		cancel()
	}
	Expect(err).NotTo(HaveOccurred(), "SSE %s at %q", st.URL, offset)
	c := &SSEConn{
		Resp:    &Response{Response: resp},
		cancel:  cancel,
		chunks:  make(chan []byte, 64),
		readErr: make(chan error, 1),
	}
	st.s.onFinish(c.Close)
	go c.pump(ctx, resp.Body)
	return c
}

// pump copies body chunks to the channel until the body ends.
func (c *SSEConn) pump(ctx context.Context, body io.ReadCloser) {
	defer body.Close()
	defer close(c.chunks)
	buf := make([]byte, 32<<10)
	for {
		n, err := body.Read(buf)
		if n > 0 {
			select {
			case c.chunks <- append([]byte(nil), buf[:n]...):
			case <-ctx.Done():
				c.readErr <- ctx.Err()
				return
			}
		}
		if err != nil {
			c.readErr <- err
			return
		}
	}
}

// Next returns the next event, io.EOF once the server ended the response, or
// errSSETimeout after wait.
func (c *SSEConn) Next(ctx context.Context, wait time.Duration) (Event, error) {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for len(c.pending) == 0 {
		if c.ended != nil {
			return Event{}, c.ended
		}
		select {
		case chunk, ok := <-c.chunks:
			if !ok {
				err := <-c.readErr
				if err == nil || errors.Is(err, io.EOF) {
					err = io.EOF
				}
				c.ended = err
				continue
			}
			c.mu.Lock()
			c.raw.Write(chunk)
			c.mu.Unlock()
			c.pending = append(c.pending, c.parser.Feed(chunk)...)
		case <-timer.C:
			return Event{}, errSSETimeout
		case <-ctx.Done():
			return Event{}, ctx.Err()
		}
	}
	ev := c.pending[0]
	c.pending = c.pending[1:]
	return ev, nil
}

// Raw is every byte received so far.
func (c *SSEConn) Raw() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]byte(nil), c.raw.Bytes()...)
}

// Close ends the request.
func (c *SSEConn) Close() { c.cancel() }

// Collect reads events until done(events so far) is true and returns them. It fails the
// spec if the response ends or wait passes first.
func (c *SSEConn) Collect(s *S, wait time.Duration, done func([]Event) bool) []Event {
	ginkgo.GinkgoHelper()
	deadline := time.Now().Add(wait)
	var evs []Event
	for {
		ev, err := c.Next(s.Ctx, time.Until(deadline))
		Expect(err).NotTo(HaveOccurred(), "waiting for SSE events (have %d: %v)", len(evs), evs)
		evs = append(evs, ev)
		if done(evs) {
			return evs
		}
	}
}

// CollectToEnd reads events until the server ends the response and returns them. It
// fails the spec if wait passes first.
func (c *SSEConn) CollectToEnd(s *S, wait time.Duration) []Event {
	ginkgo.GinkgoHelper()
	deadline := time.Now().Add(wait)
	var evs []Event
	for {
		ev, err := c.Next(s.Ctx, time.Until(deadline))
		if errors.Is(err, io.EOF) {
			return evs
		}
		Expect(err).NotTo(HaveOccurred(), "waiting for the SSE response to end (have %d events: %v)", len(evs), evs)
		evs = append(evs, ev)
	}
}

// UntilUpToDateControl is a Collect predicate: the last event is a control event with
// upToDate: true.
func UntilUpToDateControl(evs []Event) bool {
	last := evs[len(evs)-1]
	if last.Type != "control" {
		return false
	}
	c, err := ParseControl(last)
	return err == nil && c.UpToDate
}

// Controls decodes every control event of evs, failing the spec on a malformed one.
func Controls(evs []Event) []Control {
	ginkgo.GinkgoHelper()
	var out []Control
	for _, e := range evs {
		if e.Type == "control" {
			c, err := ParseControl(e)
			Expect(err).NotTo(HaveOccurred())
			out = append(out, c)
		}
	}
	return out
}

// DataEvents returns the data of every "data" event of evs.
func DataEvents(evs []Event) []string {
	var out []string
	for _, e := range evs {
		if e.Type == "data" {
			out = append(out, e.Data)
		}
	}
	return out
}
