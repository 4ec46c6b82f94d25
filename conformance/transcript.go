package conformance

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// Excerpt limits of a transcript: enough to read a failure, small enough for a report.
const (
	requestBodyExcerpt  = 512
	responseBodyExcerpt = 2048
)

// Exchange is one recorded HTTP request and its response (or transport error).
type Exchange struct {
	Start      time.Time
	Elapsed    time.Duration
	Method     string
	URL        string
	ReqHeader  http.Header
	ReqBody    []byte // excerpt
	ReqBodyLen int64  // -1: streamed (chunked)
	Status     int
	RespHeader http.Header
	Err        error

	mu       sync.Mutex
	respBody []byte // excerpt, grows while an SSE body is read
	respLen  int64
}

// noteBody appends response bytes to the excerpt as they are read.
func (e *Exchange) noteBody(p []byte) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.respLen += int64(len(p))
	if room := responseBodyExcerpt - len(e.respBody); room > 0 {
		if len(p) > room {
			p = p[:room]
		}
		e.respBody = append(e.respBody, p...)
	}
}

// Transcript records every exchange of one spec. Safe for concurrent use.
type Transcript struct {
	mu sync.Mutex
	ex []*Exchange
}

func (t *Transcript) add(e *Exchange) {
	t.mu.Lock()
	t.ex = append(t.ex, e)
	t.mu.Unlock()
}

// Len is the number of recorded exchanges.
func (t *Transcript) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.ex)
}

// String renders the transcript: per exchange the request line, request headers, request
// body excerpt, status, response headers and response body excerpt.
func (t *Transcript) String() string {
	t.mu.Lock()
	ex := append([]*Exchange(nil), t.ex...)
	t.mu.Unlock()
	var b strings.Builder
	for i, e := range ex {
		fmt.Fprintf(&b, "#%d %s %s\n", i+1, e.Method, e.URL)
		writeHeaders(&b, "  > ", e.ReqHeader)
		switch {
		case e.ReqBodyLen < 0:
			fmt.Fprintf(&b, "  > (chunked body) %s\n", quoteExcerpt(e.ReqBody, -1))
		case e.ReqBodyLen > 0:
			fmt.Fprintf(&b, "  > (%d bytes) %s\n", e.ReqBodyLen, quoteExcerpt(e.ReqBody, e.ReqBodyLen))
		}
		if e.Err != nil {
			fmt.Fprintf(&b, "  < error after %s: %v\n", e.Elapsed.Round(time.Millisecond), e.Err)
			continue
		}
		fmt.Fprintf(&b, "  < %d %s (%s)\n", e.Status, http.StatusText(e.Status), e.Elapsed.Round(time.Millisecond))
		writeHeaders(&b, "  < ", responseHeadersToShow(e))
		e.mu.Lock()
		if e.respLen > 0 {
			fmt.Fprintf(&b, "  < (%d bytes read) %s\n", e.respLen, quoteExcerpt(e.respBody, e.respLen))
		}
		e.mu.Unlock()
	}
	return b.String()
}

// responseHeadersToShow drops connection management and, except on OPTIONS, the CORS
// headers: noise in most transcripts.
func responseHeadersToShow(e *Exchange) http.Header {
	h := http.Header{}
	for k, v := range e.RespHeader {
		switch {
		case k == "Connection" || k == "Keep-Alive":
		case strings.HasPrefix(k, "Access-Control-") && e.Method != "OPTIONS":
		default:
			h[k] = v
		}
	}
	return h
}

// writeHeaders writes headers sorted by name, skipping the noise of Date.
func writeHeaders(b *strings.Builder, prefix string, h http.Header) {
	names := make([]string, 0, len(h))
	for k := range h {
		if k != "Date" {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	for _, k := range names {
		for _, v := range h[k] {
			fmt.Fprintf(b, "%s%s: %s\n", prefix, k, v)
		}
	}
}

// quoteExcerpt renders body bytes as a Go-quoted string, marking truncation.
func quoteExcerpt(p []byte, total int64) string {
	s := fmt.Sprintf("%q", p)
	if total < 0 || int64(len(p)) < total {
		s += "…"
	}
	return s
}
