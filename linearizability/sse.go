package linearizability

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
)

// sseEvent is one parsed server-sent event.
type sseEvent struct {
	name string
	data string
}

// sseScanner parses an event stream (the WHATWG algorithm, reduced to what the protocol
// uses): "event:" names the event, "data:" lines are joined with "\n" after one
// optional leading space is removed, a blank line dispatches, comments are ignored.
type sseScanner struct {
	sc *bufio.Scanner
}

func newSSEScanner(r *bufio.Reader) *sseScanner {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	sc.Split(scanSSELines)
	return &sseScanner{sc: sc}
}

// next returns the next event, or an error at the end of the stream.
func (s *sseScanner) next() (sseEvent, error) {
	var ev sseEvent
	var data []string
	seen := false
	for s.sc.Scan() {
		line := s.sc.Text()
		if line == "" {
			if seen {
				ev.data = strings.Join(data, "\n")
				return ev, nil
			}
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			ev.name, seen = value, true
		case "data":
			data, seen = append(data, value), true
		}
	}
	if err := s.sc.Err(); err != nil {
		return ev, err
	}
	return ev, fmt.Errorf("event stream ended")
}

// scanSSELines splits on CRLF, CR or LF.
func scanSSELines(data []byte, atEOF bool) (int, []byte, error) {
	for i, c := range data {
		if c == '\n' {
			return i + 1, data[:i], nil
		}
		if c == '\r' {
			if i+1 < len(data) {
				if data[i+1] == '\n' {
					return i + 2, data[:i], nil
				}
				return i + 1, data[:i], nil
			}
			if atEOF {
				return i + 1, data[:i], nil
			}
			return 0, nil, nil
		}
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}

// controlEvent is the JSON of an SSE control event (B-5.8-05).
type controlEvent struct {
	StreamNextOffset string `json:"streamNextOffset"`
	StreamCursor     string `json:"streamCursor"`
	UpToDate         bool   `json:"upToDate"`
	StreamClosed     bool   `json:"streamClosed"`
}

// followSSE reads GET ?offset=...&live=sse (B-5.8): each data event's payload, then the
// control event after it, make one LiveEvent; a control event alone (catch-up done,
// keep-alive, EOF) makes an event without data when it moves the offset or closes. The
// reader disconnects after a random number of control events, or when the server ends
// the response, and reconnects from the last streamNextOffset (B-5.8-07).
func (c *HTTPClient) followSSE(ctx context.Context, t *Transcript, rng *rand.Rand) {
	from, cursor := "-1", ""
	for ctx.Err() == nil {
		end, done := c.sseConnection(ctx, t, &from, &cursor, 1+rng.IntN(30))
		if done {
			t.End = end
			return
		}
	}
	t.End = "stopped: " + context.Cause(ctx).Error()
}

// sseConnection reads one connection; done reports that following must stop (EOF or a
// failure) and end says why.
func (c *HTTPClient) sseConnection(ctx context.Context, t *Transcript, from, cursor *string, budget int) (end string, done bool) {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	u := c.streamURL(t.Stream) + "?offset=" + url.QueryEscape(*from) + "&live=sse"
	if *cursor != "" {
		u += "&cursor=" + url.QueryEscape(*cursor)
	}
	req, err := http.NewRequestWithContext(cctx, http.MethodGet, u, nil)
	if err != nil {
		return err.Error(), true
	}
	resp, err := c.HTTP.Do(req)
	if err == nil {
		defer resp.Body.Close()
	}
	if c.retryLive(ctx, resp, err, len(t.Events) == 0) {
		return "", false // reconnect from *from
	}
	if err != nil {
		return "stopped: " + err.Error(), true
	}
	if resp.StatusCode != 200 {
		return fmt.Sprintf("status %d", resp.StatusCode), true
	}
	b64 := strings.EqualFold(resp.Header.Get("Stream-Sse-Data-Encoding"), "base64")
	sc := newSSEScanner(bufio.NewReader(resp.Body))
	reconnect := true
	var pending []byte
	for controls := 0; controls < budget; {
		ev, err := sc.next()
		if err != nil {
			if ctx.Err() != nil {
				return "stopped: " + context.Cause(ctx).Error(), true
			}
			return "", false // the server ended the response: reconnect
		}
		switch ev.name {
		case "data":
			chunk := []byte(ev.data)
			if b64 {
				if chunk, err = base64.StdEncoding.DecodeString(strings.Join(strings.Fields(ev.data), "")); err != nil {
					return "invalid base64 in a data event: " + err.Error(), true
				}
			}
			pending = append(pending, chunk...)
		case "control":
			controls++
			var ce controlEvent
			if err := json.Unmarshal([]byte(ev.data), &ce); err != nil {
				return "invalid control event: " + err.Error(), true
			}
			if ce.StreamCursor != "" {
				*cursor = ce.StreamCursor
			}
			if len(pending) > 0 || ce.StreamClosed || ce.StreamNextOffset != *from {
				t.Events = append(t.Events, LiveEvent{From: *from, Data: pending, Next: ce.StreamNextOffset,
					Closed: ce.StreamClosed, Reconnect: reconnect})
				reconnect = false
			}
			pending = nil
			*from = ce.StreamNextOffset
			if ce.StreamClosed {
				return "eof", true
			}
		}
	}
	return "", false
}
