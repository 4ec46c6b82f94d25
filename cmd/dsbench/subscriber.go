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
type subscriber struct {
	URL    string       // stream URL
	Client *http.Client // no overall timeout: responses are long-lived
	Offset string       // where to (re)connect from; updated by every control event

	OnData    func(data []byte, at time.Time) // optional; data is valid during the call only
	connected chan struct{}                   // closed at the first control event
	once      sync.Once

	Reconnects int      // responses that ended and were resumed
	Statuses   Statuses // connection attempts by outcome
	Closed     bool     // a control event said streamClosed
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

// follow makes one SSE request and reads it to its end. got reports whether the response
// delivered at least one control event (a healthy connection that then ended).
func (s *subscriber) follow(ctx context.Context) (got bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet,
		s.URL+"?offset="+url.QueryEscape(s.Offset)+"&live=sse", nil)
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
	b64 := strings.EqualFold(resp.Header.Get("Stream-Sse-Data-Encoding"), "base64")
	rd := newSSEReader(resp.Body)
	var decoded, last []byte
	defer func() {
		if len(last) > 0 {
			if cerr := s.applyControl(last); cerr != nil && err == nil {
				err = cerr
			}
		}
	}()
	for {
		ev, err := rd.Next()
		if err != nil {
			return got, err
		}
		switch ev.Name {
		case "data":
			if s.OnData == nil {
				continue
			}
			data := ev.Data
			if b64 {
				clean := strings.NewReplacer("\n", "", "\r", "").Replace(string(data))
				decoded, err = base64.StdEncoding.AppendDecode(decoded[:0], []byte(clean))
				if err != nil {
					return got, fmt.Errorf("base64 data event: %w", err)
				}
				data = decoded
			}
			s.OnData(data, time.Now())
		case "control":
			// Decoding every control event would cost the generator more than the server
			// spends sending it: keep the latest and decode it when the response ends, or
			// now when it may say streamClosed.
			last = append(last[:0], ev.Data...)
			got = true
			s.once.Do(func() { close(s.connected) })
			if bytes.Contains(ev.Data, []byte("streamClosed")) {
				if err := s.applyControl(last); err != nil {
					return got, err
				}
				last = last[:0]
				if s.Closed {
					return got, nil
				}
			}
		}
	}
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
