package conformance

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// S is one spec's handle on the server under test: its context (bounded by
// Config.SpecTimeout), a client that records every exchange, fresh stream names, and the
// cleanup of whatever the spec created.
type S struct {
	// Ctx is cancelled when the spec ends or runs out of time.
	Ctx context.Context

	rt *runtime
	c  *client

	mu      sync.Mutex
	streams []string // URLs to delete, in creation order
	buckets []string // bucket URLs to delete after the streams
	closers []func()
	slugs   int
}

func newS(ctx context.Context, rt *runtime) *S {
	return &S{Ctx: ctx, rt: rt, c: &client{http: rt.http, tr: &Transcript{}}}
}

// Config is the run's configuration (with defaults filled in).
func (s *S) Config() Config { return s.rt.cfg }

// LongPollTimeout is the server's long-poll timeout (Config.LongPollTimeout).
func (s *S) LongPollTimeout() time.Duration { return s.rt.cfg.LongPollTimeout }

// Transcript is the spec's recorded exchanges.
func (s *S) Transcript() *Transcript { return s.c.tr }

// finish attaches the transcript when the spec failed, then closes open connections and
// deletes what the spec created, best-effort, with a fresh context.
func (s *S) finish() {
	if ginkgo.CurrentSpecReport().Failed() && s.c.tr.Len() > 0 {
		ginkgo.AddReportEntry(transcriptEntry, s.c.tr.String(), ginkgo.ReportEntryVisibilityNever)
	}
	s.mu.Lock()
	closers, streams, buckets := s.closers, s.streams, s.buckets
	s.mu.Unlock()
	for _, c := range closers {
		c()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	quiet := &client{http: s.rt.http, tr: &Transcript{}}
	for i := len(streams) - 1; i >= 0; i-- {
		s.rt.deleteQuietly(ctx, quiet, streams[i])
	}
	for _, b := range buckets {
		s.rt.deleteQuietly(ctx, quiet, b)
	}
}

// transcriptEntry names the report entry holding a failed spec's HTTP transcript.
const transcriptEntry = "HTTP transcript"

// onFinish registers f to run when the spec ends, before the cleanup deletes.
func (s *S) onFinish(f func()) {
	s.mu.Lock()
	s.closers = append(s.closers, f)
	s.mu.Unlock()
}

var slugRE = regexp.MustCompile(`[^a-z0-9]+`)

// Name returns a fresh stream name: <prefix><runID>-<n>-<slug>. Names never contain a
// slash and are unique across runs (crypto-random run id) and within one (counter).
func (s *S) Name(slug string) string {
	slug = strings.Trim(slugRE.ReplaceAllString(strings.ToLower(slug), "-"), "-")
	if len(slug) > 32 {
		slug = slug[:32]
	}
	if slug == "" {
		slug = "s"
	}
	return fmt.Sprintf("%s%s-%d-%s", s.rt.cfg.NamePrefix, s.rt.runID, s.rt.nextSerial(), slug)
}

// URLFor is the URL of the stream called name on the configured surface.
func (s *S) URLFor(name string) string { return s.rt.streamURL(name) }

// Stream returns a handle on a fresh, not yet created stream and registers it for
// deletion when the spec ends.
func (s *S) Stream(slug string) *Stream {
	return s.StreamNamed(s.Name(slug))
}

// trackURL registers a stream URL for deletion when the spec ends.
func (s *S) trackURL(u string) {
	s.mu.Lock()
	s.streams = append(s.streams, u)
	s.mu.Unlock()
}

// StreamNamed is Stream with an exact name (registered for cleanup too).
func (s *S) StreamNamed(name string) *Stream {
	u := s.URLFor(name)
	s.mu.Lock()
	s.streams = append(s.streams, u)
	s.mu.Unlock()
	pu, _ := url.Parse(u)
	ext := s.rt.extURL(name)
	eu, _ := url.Parse(ext)
	return &Stream{s: s, Name: name, URL: u, Path: pu.EscapedPath(), Ext: ext, ExtPath: eu.EscapedPath()}
}

// Create makes a fresh stream with PUT and fails the spec unless the server answers 201.
// opts default to Content-Type text/plain; pass CT(...) to change it.
func (s *S) Create(slug string, opts ...Opt) *Stream {
	ginkgo.GinkgoHelper()
	st := s.Stream(slug)
	st.MustCreate(opts...)
	return st
}

// Do sends a request and reads the whole response; a transport error fails the spec.
func (s *S) Do(method, rawURL string, opts ...Opt) *Response {
	ginkgo.GinkgoHelper()
	r, err := s.TryDo(s.Ctx, method, rawURL, opts...)
	Expect(err).NotTo(HaveOccurred(), "%s %s", method, rawURL)
	return r
}

// TryDo sends a request with ctx and returns the transport error instead of failing.
func (s *S) TryDo(ctx context.Context, method, rawURL string, opts ...Opt) (*Response, error) {
	req, spec, err := build(ctx, method, rawURL, opts)
	if err != nil {
		return nil, err
	}
	return s.c.do(req, spec)
}

// open sends a request and returns the response with its body unread (SSE).
func (s *S) open(ctx context.Context, method, rawURL string, opts ...Opt) (*http.Response, *Exchange, error) {
	req, spec, err := build(ctx, method, rawURL, opts)
	if err != nil {
		return nil, nil, err
	}
	return s.c.open(req, spec)
}

// registerBucket schedules DELETE of a bucket URL after the spec's streams are deleted.
func (s *S) registerBucket(u string) {
	s.mu.Lock()
	s.buckets = append(s.buckets, u)
	s.mu.Unlock()
}

// Async runs f (a request) in a goroutine and returns a channel with its response.
// Failures inside f are reported to the spec.
func (s *S) Async(f func() *Response) <-chan *Response {
	ch := make(chan *Response, 1)
	go func() {
		defer ginkgo.GinkgoRecover()
		ch <- f()
	}()
	return ch
}

// Await receives the response of an Async request, failing the spec if none arrives
// within the long-poll budget.
func (s *S) Await(ch <-chan *Response) *Response {
	ginkgo.GinkgoHelper()
	select {
	case r := <-ch:
		return r
	case <-time.After(s.longPollBudget()):
		ginkgo.Fail(s.longPollHint())
	case <-s.Ctx.Done():
		ginkgo.Fail("spec context ended while waiting: " + s.Ctx.Err().Error())
	}
	return nil
}
