package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// subscriber follows one stream over SSE (`GET {stream}?offset=O&live=sse`, §5.8). When the
// server ends the response without a streamClosed control event (servers close SSE about every
// 60 s, §10.2) it reconnects from the last control event's streamNextOffset. Data events of
// base64-encoded streams (stream-sse-data-encoding: base64) are decoded before OnData.
// Responses are read through Client on Run's goroutine, or, when Poller is set, on the
// poller's (which must be running), Run's goroutine then only connecting.
type subscriber struct {
	URL    string       // stream URL
	Client *http.Client // no overall timeout: responses are long-lived
	Poller *ssePoller   // when set (http:// URLs only), responses are read on it, not through Client
	Offset string       // where to (re)connect from; updated by every control event

	OnData    func(data []byte, at time.Time) // optional; data is valid during the call only
	connected chan struct{}                   // closed at the first control event
	once      sync.Once

	Reconnects int      // responses that ended and were resumed
	Statuses   Statuses // connection attempts by outcome
	Closed     bool     // a control event said streamClosed

	resp sseResponse // the response being read
}

func newSubscriber(u string, c *http.Client, offset string) *subscriber {
	return &subscriber{URL: u, Client: c, Offset: offset, connected: make(chan struct{}), Statuses: Statuses{}}
}

// Run follows the stream until ctx ends or the stream closes. A failed connection attempt is
// retried after retry; Run gives up after attempts consecutive failures (0 = never).
func (s *subscriber) Run(ctx context.Context, retry time.Duration, attempts int) error {
	failures := 0
	for ctx.Err() == nil && !s.Closed {
		got, err := s.follow(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if got {
			failures = 0
			if !s.Closed {
				s.Reconnects++
			}
			continue
		}
		failures++
		if attempts > 0 && failures >= attempts {
			return fmt.Errorf("subscribe %s: %w", s.URL, err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(retry):
		}
	}
	return nil
}

// follow makes one SSE request through s.Client and reads it to its end. got reports whether
// the response delivered at least one control event (a healthy connection that then ended).
func (s *subscriber) follow(ctx context.Context) (got bool, err error) {
	if s.Poller != nil {
		return s.followPolled(ctx)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.requestURL(), nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := s.Client.Do(req)
	if err != nil {
		s.Statuses.Inc(0, err)
		return false, err
	}
	defer resp.Body.Close()
	s.Statuses.Inc(resp.StatusCode, nil)
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	s.beginResponse(resp.Header)
	rd := newSSEReader(resp.Body)
	for {
		ev, err := rd.Next()
		if err != nil {
			return s.resp.got, s.endResponse(err)
		}
		if stop, err := s.handle(ev, time.Now()); stop || err != nil {
			return s.resp.got, s.endResponse(err)
		}
	}
}

// requestURL is the SSE request's URL, from the current offset.
func (s *subscriber) requestURL() string {
	return s.URL + "?offset=" + url.QueryEscape(s.Offset) + "&live=sse"
}

// sseResponse is what a subscriber keeps while it reads one SSE response.
type sseResponse struct {
	base64  bool   // data events are base64 (Stream-SSE-Data-Encoding)
	got     bool   // a control event arrived
	last    []byte // data of the latest control event not yet applied
	decoded []byte // base64 decoding buffer
}

// beginResponse starts reading a 200 SSE response with header h.
func (s *subscriber) beginResponse(h http.Header) {
	s.resp.base64 = strings.EqualFold(h.Get("Stream-Sse-Data-Encoding"), "base64")
	s.resp.got = false
	s.resp.last = s.resp.last[:0]
}

// handle takes one event of the response received at at: data goes to OnData (decoded from
// base64 when the response says so), control events update the resume offset. stop says the
// stream is closed (a control event said streamClosed); err a malformed event.
func (s *subscriber) handle(ev sseEvent, at time.Time) (stop bool, err error) {
	switch ev.Name {
	case "data":
		if s.OnData == nil {
			return false, nil
		}
		data := ev.Data
		if s.resp.base64 { // the decoder skips the "\n" of data events split over lines
			s.resp.decoded, err = base64.StdEncoding.AppendDecode(s.resp.decoded[:0], data)
			if err != nil {
				return false, fmt.Errorf("base64 data event: %w", err)
			}
			data = s.resp.decoded
		}
		s.OnData(data, at)
	case "control":
		// Decoding every control event would cost the generator more than the server
		// spends sending it: keep the latest and decode it when the response ends, or
		// now when it may say streamClosed.
		s.resp.last = append(s.resp.last[:0], ev.Data...)
		s.resp.got = true
		s.once.Do(func() { close(s.connected) })
		if bytes.Contains(ev.Data, []byte("streamClosed")) {
			err := s.applyControl(s.resp.last)
			s.resp.last = s.resp.last[:0]
			return s.Closed || err != nil, err
		}
	}
	return false, nil
}

// endResponse applies the response's latest control event when it ended with err, and
// returns err, or the control event's error when err is nil.
func (s *subscriber) endResponse(err error) error {
	if len(s.resp.last) > 0 {
		if cerr := s.applyControl(s.resp.last); cerr != nil && err == nil {
			err = cerr
		}
		s.resp.last = s.resp.last[:0]
	}
	return err
}

// applyControl takes the resume offset and closure from a control event's data.
func (s *subscriber) applyControl(data []byte) error {
	c, err := parseControl(data)
	if err != nil {
		return fmt.Errorf("control event: %w", err)
	}
	if c.StreamNextOffset != "" {
		s.Offset = c.StreamNextOffset
	}
	s.Closed = s.Closed || c.StreamClosed
	return nil
}

// newSSEClient returns a client for n long-lived SSE responses (one connection each).
func newSSEClient(n int) *http.Client {
	c := newHTTPClient(n, 0)
	c.Transport.(*http.Transport).ResponseHeaderTimeout = 30 * time.Second
	c.Transport.(*http.Transport).ReadBufferSize = 4 << 10
	c.Transport.(*http.Transport).WriteBufferSize = 4 << 10
	return c
}

// startSubscribers runs every subscriber in its own goroutine until ctx ends, with at most
// parallel of them connecting at once (one waiting for its first control event holds a slot),
// so that thousands of subscribers do not all dial in the same instant. Wait on the returned
// group after cancelling ctx.
func startSubscribers(ctx context.Context, subs []*subscriber, parallel int, retry time.Duration) *sync.WaitGroup {
	var wg sync.WaitGroup
	slots := make(chan struct{}, parallel)
	for _, s := range subs {
		wg.Go(func() {
			slots <- struct{}{}
			go func() {
				select {
				case <-s.connected:
				case <-ctx.Done():
				}
				<-slots
			}()
			_ = s.Run(ctx, retry, 0)
		})
	}
	return &wg
}

// waitConnected waits until every subscriber has had its first control event or timeout
// passes, and returns how many had.
func waitConnected(subs []*subscriber, timeout time.Duration) int {
	deadline := time.After(timeout)
	for _, s := range subs {
		select {
		case <-s.connected:
		case <-deadline:
			return countConnected(subs)
		}
	}
	return len(subs)
}

func countConnected(subs []*subscriber) int {
	n := 0
	for _, s := range subs {
		select {
		case <-s.connected:
			n++
		default:
		}
	}
	return n
}
