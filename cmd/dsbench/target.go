package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// errUnsupported marks a feature the server does not offer (404/405/501 on its endpoint).
var errUnsupported = errors.New("unsupported by the server")

// Common holds the flags every workload that talks to a server shares.
type Common struct {
	Base    string        // server base URL, no trailing slash
	Bucket  string        // "" = flat surface /v1/stream/{name}
	Prefix  string        // stream name prefix
	Tags    []KV          // extra key=value pairs copied into the RESULT line
	Timeout time.Duration // per request (not applied to SSE responses)
}

// registerCommon adds --base, --bucket, --prefix, --tags and --timeout to fs. The
// function it returns parses args into fs and returns the common options.
func registerCommon(fs *flag.FlagSet) func(args []string) (Common, error) {
	base := fs.String("base", os.Getenv("DS_BASE_URL"), "server base URL (default $DS_BASE_URL)")
	bucket := fs.String("bucket", "", "bucketed surface: streams at {base}/{bucket}/{name}, bucket created with PUT {base}/{bucket}; empty = flat {base}/v1/stream/{name}")
	prefix := fs.String("prefix", "", "stream name prefix (default bench-<random>, fresh each run)")
	tags := fs.String("tags", os.Getenv("BENCH_TAGS"), `extra "key=value key=value" pairs copied into the RESULT line, e.g. "server=dsd round=1" (default $BENCH_TAGS)`)
	timeout := fs.Duration("timeout", 30*time.Second, "per-request timeout (SSE responses excepted)")
	return func(args []string) (Common, error) {
		if err := fs.Parse(args); err != nil {
			return Common{}, err
		}
		c := Common{Base: strings.TrimRight(*base, "/"), Bucket: *bucket, Prefix: *prefix, Timeout: *timeout}
		if c.Base == "" {
			return c, errors.New("--base (or $DS_BASE_URL) is required")
		}
		if _, err := url.Parse(c.Base); err != nil {
			return c, fmt.Errorf("--base: %w", err)
		}
		if c.Prefix == "" {
			c.Prefix = "bench-" + strconv.FormatInt(time.Now().UnixNano(), 36)
		}
		var err error
		c.Tags, err = parseTags(*tags)
		return c, err
	}
}

// Target addresses streams on one server and carries the HTTP client used for them.
type Target struct {
	Common
	Client *http.Client
}

// newTarget builds a Target whose client keeps up to conns idle connections per host.
func newTarget(c Common, conns int) *Target {
	return &Target{Common: c, Client: newHTTPClient(conns, c.Timeout)}
}

// writerClients returns one client per closed-loop writer. For an http:// base each owns
// one connection driven from the writer's own goroutine (connTransport), which costs the
// generator less CPU per request than a shared net/http Transport; otherwise (https) they
// all share t.Client.
func (t *Target) writerClients(n int) []*http.Client {
	own := strings.HasPrefix(t.Base, "http://")
	cs := make([]*http.Client, n)
	for i := range cs {
		cs[i] = t.Client
		if own {
			cs[i] = &http.Client{Transport: &connTransport{Timeout: t.Timeout}, CheckRedirect: t.Client.CheckRedirect}
		}
	}
	return cs
}

// newHTTPClient returns a keep-alive client tuned for a closed loop of conns connections:
// no compression (bytes on the wire are what we measure), idle pool >= conns, no proxy.
// timeout bounds each whole request (0 = none, for SSE).
func newHTTPClient(conns int, timeout time.Duration) *http.Client {
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        0,
		MaxIdleConnsPerHost: conns + 16,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
		WriteBufferSize:     16 << 10,
		ReadBufferSize:      16 << 10,
	}
	return &http.Client{Transport: tr, Timeout: timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// StreamName returns the i-th stream name of this run.
func (t *Target) StreamName(i int) string { return t.Prefix + "-" + strconv.Itoa(i) }

// StreamURL returns the URL of the named stream on the target's surface.
func (t *Target) StreamURL(name string) string {
	if t.Bucket == "" {
		return t.Base + "/v1/stream/" + url.PathEscape(name)
	}
	return t.Base + "/" + t.Bucket + "/" + url.PathEscape(name)
}

// ExtURL returns the URL of the named stream for extension sub-resources, which live on
// the bucketed surface only (D1 amended): a flat target uses dsd's compat bucket "default".
func (t *Target) ExtURL(name string) string {
	if t.Bucket == "" {
		return t.Base + "/default/" + url.PathEscape(name)
	}
	return t.StreamURL(name)
}

// Prepare creates the bucket when the target is bucketed (201 created or 409 exists are both
// fine). A 404/405/501 answer means the server has no buckets: errUnsupported.
func (t *Target) Prepare(ctx context.Context) error {
	if t.Bucket == "" {
		return nil
	}
	st, _, err := t.do(ctx, http.MethodPut, t.Base+"/"+t.Bucket, nil, nil)
	switch {
	case err != nil:
		return fmt.Errorf("create bucket: %w", err)
	case st == 201 || st == 200 || st == 204 || st == 409:
		return nil
	case st == 404 || st == 405 || st == 501:
		return fmt.Errorf("buckets: HTTP %d: %w", st, errUnsupported)
	default:
		return fmt.Errorf("create bucket %s: HTTP %d", t.Bucket, st)
	}
}

// CreateStream creates the named stream with the content type (PUT, 201 or 200) and returns
// its tail (Stream-Next-Offset).
func (t *Target) CreateStream(ctx context.Context, name, contentType string) (string, error) {
	st, h, body, err := t.doHeader(ctx, http.MethodPut, t.StreamURL(name), map[string]string{"Content-Type": contentType}, nil)
	if err != nil {
		return "", fmt.Errorf("create %s: %w", name, err)
	}
	if st != 201 && st != 200 {
		return "", fmt.Errorf("create %s: HTTP %d %s", name, st, trimBody(body))
	}
	return h.Get("Stream-Next-Offset"), nil
}

// CreateStreamWith creates the named stream with initial content (PUT with a body, §5.1);
// only 201 counts: an existing stream would not hold this content.
func (t *Target) CreateStreamWith(ctx context.Context, name, contentType string, body []byte) error {
	st, b, err := t.do(ctx, http.MethodPut, t.StreamURL(name), map[string]string{"Content-Type": contentType}, body)
	if err != nil {
		return fmt.Errorf("create %s: %w", name, err)
	}
	if st != 201 {
		return fmt.Errorf("create %s with %d bytes: HTTP %d %s", name, len(body), st, trimBody(b))
	}
	return nil
}

// CreateStreams creates streams 0..n-1 with conns requests in flight.
func (t *Target) CreateStreams(ctx context.Context, n, conns int, contentType string) error {
	return forEach(ctx, n, conns, func(ctx context.Context, i int) error {
		_, err := t.CreateStream(ctx, t.StreamName(i), contentType)
		return err
	})
}

// do sends one request and reads the whole response body. headers may be nil.
func (t *Target) do(ctx context.Context, method, u string, headers map[string]string, body []byte) (int, []byte, error) {
	st, _, b, err := t.doHeader(ctx, method, u, headers, body)
	return st, b, err
}

// doHeader is do that also returns the response headers.
func (t *Target) doHeader(ctx context.Context, method, u string, headers map[string]string, body []byte) (int, http.Header, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return 0, nil, nil, err
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := t.Client.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b, err
}

// trimBody shortens an error body for a message.
func trimBody(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// unsupportedStatus reports whether a status on an extension endpoint means "not offered".
func unsupportedStatus(st int) bool { return st == 404 || st == 405 || st == 501 }

// unsupportedOr reports err as "unsupported" (exit 0) when it wraps errUnsupported, and
// returns it otherwise.
func unsupportedOr(workload string, tags []KV, err error) error {
	if errors.Is(err, errUnsupported) {
		return reportUnsupported(workload, tags, err)
	}
	return err
}

// reportUnsupported prints the outcome of a workload the server cannot run.
func reportUnsupported(workload string, tags []KV, why error) error {
	fmt.Printf("unsupported: %s: %v\n", workload, why)
	r := NewResult(workload, tags)
	r.Set("unsupported", true)
	fmt.Println(r)
	return nil
}
