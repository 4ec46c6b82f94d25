package linearizability

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dsd-project/dsd/model"
)

// Surface names a URL layout (docs/DESIGN.md D1).
type Surface string

const (
	// SurfaceFlat addresses streams as {base}/v1/stream/{name}: the base protocol's
	// compatibility surface, served by any Durable Streams server.
	SurfaceFlat Surface = "flat"
	// SurfaceBucketed addresses streams as {base}/{bucket}/{name} after PUT
	// {base}/{bucket} (extension §1).
	SurfaceBucketed Surface = "bucketed"
)

// HTTPClient drives any Durable Streams server over HTTP. It uses only the protocol:
// URLs per Surface, the registered headers, and offsets as opaque tokens.
type HTTPClient struct {
	Base    string // no trailing slash
	Surface Surface
	Bucket  string // bucketed surface only
	// StreamPath is the flat surface's stream prefix (default "/v1/stream/").
	StreamPath string
	// Bases, when set, are the roots of several servers of one cluster (Base is then
	// the first): requests go to each in turn, so every client of the workload talks to
	// every server and a write made through one must be seen through the others.
	Bases []string
	// CompatBucket is the bucket behind the flat surface, where a flat stream's extension
	// sub-resources live (D1 amended; default dsd's "default").
	CompatBucket string
	// Timeout bounds one non-live request; a request that runs out has an unknown
	// outcome (default 10 s).
	Timeout time.Duration
	// HTTP is the client used (default: one with a pooled transport).
	HTTP *http.Client
	// LiveRetry, when above 0, makes a live reader whose request fails (no answer, or a
	// 502 or 503) try again from the same offset after this pause, as a client of a
	// cluster losing nodes does (D11: 503 carries Retry-After); 0 ends the transcript.
	LiveRetry time.Duration

	next atomic.Uint64 // the next entry of Bases
}

var _ Client = (*HTTPClient)(nil)

// NewHTTPClient returns a client for base on the given surface.
func NewHTTPClient(base string, surface Surface, bucket string) *HTTPClient {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 256, 256
	return &HTTPClient{Base: strings.TrimSuffix(base, "/"), Surface: surface, Bucket: bucket,
		Timeout: 10 * time.Second, HTTP: &http.Client{Transport: tr}}
}

func (c *HTTPClient) streamURL(stream string) string {
	if c.Surface == SurfaceBucketed {
		return c.base() + "/" + url.PathEscape(c.Bucket) + "/" + url.PathEscape(stream)
	}
	prefix := c.StreamPath
	if prefix == "" {
		prefix = "/v1/stream/"
	}
	return c.base() + prefix + url.PathEscape(stream)
}

// base is the server root of the next request: Base, or the next of Bases in turn.
func (c *HTTPClient) base() string {
	if len(c.Bases) == 0 {
		return c.Base
	}
	return strings.TrimSuffix(c.Bases[(c.next.Add(1)-1)%uint64(len(c.Bases))], "/")
}

// extURL is the stream's URL for extension sub-resources, which live on the bucketed
// surface only (D1 amended): on the flat surface a stream without '/' is
// /{CompatBucket}/{name}.
func (c *HTTPClient) extURL(stream string) string {
	if c.Surface == SurfaceBucketed {
		return c.streamURL(stream)
	}
	b := c.CompatBucket
	if b == "" {
		b = "default"
	}
	return c.base() + "/" + url.PathEscape(b) + "/" + url.PathEscape(stream)
}

// Setup creates the bucket on the bucketed surface (201, or 409 when it exists).
func (c *HTTPClient) Setup() error {
	if c.Surface != SurfaceBucketed {
		return nil
	}
	resp, err := c.do(http.MethodPut, c.Base+"/"+url.PathEscape(c.Bucket), nil, nil)
	if err != nil {
		return err
	}
	if resp.StatusCode != 201 && resp.StatusCode != 409 {
		return fmt.Errorf("PUT bucket %s: status %d", c.Bucket, resp.StatusCode)
	}
	return nil
}

// response is a finished exchange: status, headers, body.
type response struct {
	StatusCode int
	Header     http.Header
	Body       []byte
}

// do sends one request with the client's timeout and reads the whole response.
func (c *HTTPClient) do(method, u string, hdr http.Header, body []byte) (*response, error) {
	return c.doWith(c.HTTP, method, u, hdr, body)
}

// doWith is do through hc.
func (c *HTTPClient) doWith(hc *http.Client, method, u string, hdr http.Header, body []byte) (*response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout())
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = strings.NewReader(string(body))
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, err
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return &response{StatusCode: resp.StatusCode, Header: resp.Header, Body: b}, nil
}

func (c *HTTPClient) timeout() time.Duration {
	if c.Timeout == 0 {
		return 10 * time.Second
	}
	return c.Timeout
}

// output reads the protocol headers of a response; transport errors and 5xx are unknown
// outcomes.
func output(resp *response, err error) Output {
	if err != nil {
		return Output{Error: err.Error()}
	}
	if resp.StatusCode >= 500 {
		return Output{Error: fmt.Sprintf("status %d", resp.StatusCode)}
	}
	h := resp.Header
	out := Output{Status: resp.StatusCode, Offset: h.Get("Stream-Next-Offset"),
		Closed: strings.EqualFold(strings.TrimSpace(h.Get("Stream-Closed")), "true")}
	out.Epoch, out.Seq = headerUint(h, "Producer-Epoch"), headerUint(h, "Producer-Seq")
	out.Expected, out.Received = headerUint(h, "Producer-Expected-Seq"), headerUint(h, "Producer-Received-Seq")
	out.SnapOffset, out.SnapDigest = h.Get("Stream-Snapshot-Offset"), h.Get("Stream-Snapshot-Digest")
	out.RecFirst, out.RecStart = headerUint(h, "Stream-Record-First"), headerUint(h, "Stream-Record-Start")
	out.RecNext = headerUint(h, "Stream-Record-Next")
	return out
}

func headerUint(h http.Header, name string) *uint64 {
	v, err := strconv.ParseUint(h.Get(name), 10, 64)
	if err != nil {
		return nil
	}
	return &v
}

// Create implements Client.
func (c *HTTPClient) Create(stream string) Output {
	return output(c.do(http.MethodPut, c.streamURL(stream), http.Header{"Content-Type": {c.contentType(stream)}}, nil))
}

// Append implements Client.
func (c *HTTPClient) Append(in Input) Output {
	h := http.Header{}
	if in.Body != "" {
		h.Set("Content-Type", c.contentType(in.Stream))
	}
	if in.RecordMatch != nil {
		h.Set("Stream-Record-Match", strconv.FormatUint(*in.RecordMatch, 10))
	}
	if in.Close {
		h.Set("Stream-Closed", "true")
	}
	if p := in.Producer; p != nil {
		h.Set("Producer-Id", p.ID)
		h.Set("Producer-Epoch", strconv.FormatUint(p.Epoch, 10))
		h.Set("Producer-Seq", strconv.FormatUint(p.Seq, 10))
	}
	if in.StreamSeq != "" {
		h.Set("Stream-Seq", in.StreamSeq)
	}
	return output(c.do(http.MethodPost, c.streamURL(in.Stream), h, []byte(in.Body)))
}

// Head implements Client.
func (c *HTTPClient) Head(stream string) Output {
	return output(c.do(http.MethodHead, c.streamURL(stream), nil, nil))
}

// ReadAll implements Client: GET ?offset=-1, then Stream-Next-Offset until
// Stream-Up-To-Date (B-5.6-09). The result is the state at the last request, since a
// stream only grows.
func (c *HTTPClient) ReadAll(stream string) (Output, []byte) {
	from, retained := "-1", ""
	for range 100 {
		data, next, closed, status, err := c.readChunks(stream, from)
		switch {
		case err != nil:
			return Output{Error: err.Error()}, nil
		case status == 410 && next != "" && next != from:
			from, retained = next, next // D2: resume at the earliest retained offset
			continue
		case status != 200:
			return Output{Status: status}, nil
		}
		return Output{Status: 200, Offset: next, Closed: closed, Len: uint64(len(data)), Digest: DigestOf(data),
			Msgs: countMsgs(stream, data), Retained: retained}, data
	}
	return Output{Error: "a read from -1 kept answering 410"}, nil
}

// ReadFrom implements Client.
func (c *HTTPClient) ReadFrom(stream, offset string) ([]byte, string, error) {
	data, next, _, status, err := c.readChunks(stream, offset)
	if err == nil && status != 200 {
		err = fmt.Errorf("GET from %s: status %d", offset, status)
	}
	return data, next, err
}

func (c *HTTPClient) readChunks(stream, offset string) (data []byte, next string, closed bool, status int, err error) {
	for i := 0; i < 100000; i++ {
		resp, err := c.do(http.MethodGet, c.streamURL(stream)+"?offset="+url.QueryEscape(offset), nil, nil)
		if err != nil {
			return nil, "", false, 0, err
		}
		if resp.StatusCode != 200 {
			if resp.StatusCode >= 500 {
				return nil, "", false, 0, fmt.Errorf("status %d", resp.StatusCode)
			}
			return nil, resp.Header.Get("Stream-Next-Offset"), false, resp.StatusCode, nil
		}
		chunk := resp.Body
		if isJSONStream(stream) { // a JSON array of whole messages (B-9.1-04): back to canonical bytes (D3)
			msgs, err := model.FlattenJSON(chunk, true)
			if err != nil {
				return nil, "", false, 0, fmt.Errorf("read of a JSON stream: %w: %q", err, chunk)
			}
			chunk = model.CanonicalJSON(msgs)
		}
		data = append(data, chunk...)
		next = resp.Header.Get("Stream-Next-Offset")
		if next == "" { // an observation: the model wants the tail's token (B-5.6-04)
			return data, "", false, 200, nil
		}
		if resp.Header.Get("Stream-Up-To-Date") != "" {
			closed = strings.EqualFold(strings.TrimSpace(resp.Header.Get("Stream-Closed")), "true")
			return data, next, closed, 200, nil
		}
		if next == offset && len(resp.Body) == 0 {
			return nil, "", false, 0, errors.New("a read that is not up to date made no progress")
		}
		offset = next
	}
	return nil, "", false, 0, errors.New("too many chunks")
}

// LiveModes implements Client.
func (c *HTTPClient) LiveModes() []string { return []string{"long-poll", "sse"} }

// Follow implements Client.
func (c *HTTPClient) Follow(ctx context.Context, stream, mode string, rng *rand.Rand) Transcript {
	t := Transcript{Stream: stream, Mode: mode}
	if mode == "sse" {
		c.followSSE(ctx, &t, rng)
	} else {
		c.followLongPoll(ctx, &t)
	}
	return t
}

// followLongPoll issues GET ?offset=...&live=long-poll until EOF (B-5.7): 200 with data,
// or 204 at the tail; Stream-Closed marks EOF.
func (c *HTTPClient) followLongPoll(ctx context.Context, t *Transcript) {
	from, cursor := "-1", ""
	for ctx.Err() == nil {
		u := c.streamURL(t.Stream) + "?offset=" + url.QueryEscape(from) + "&live=long-poll"
		if cursor != "" {
			u += "&cursor=" + url.QueryEscape(cursor)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			t.End = err.Error()
			return
		}
		resp, err := c.HTTP.Do(req)
		var body []byte
		if err == nil {
			body, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		if c.retryLive(ctx, resp, err, len(t.Events) == 0) {
			continue
		}
		if err != nil {
			t.End = "stopped: " + err.Error()
			return
		}
		if resp.StatusCode != 200 && resp.StatusCode != 204 {
			t.End = fmt.Sprintf("status %d", resp.StatusCode)
			return
		}
		next := resp.Header.Get("Stream-Next-Offset")
		closed := strings.EqualFold(strings.TrimSpace(resp.Header.Get("Stream-Closed")), "true")
		cursor = resp.Header.Get("Stream-Cursor")
		if len(body) > 0 || closed || next != from {
			t.Events = append(t.Events, LiveEvent{From: from, Data: body, Next: next, Closed: closed, Reconnect: true})
		}
		if closed {
			t.End = "eof"
			return
		}
		if next == "" {
			t.End = "response without Stream-Next-Offset"
			return
		}
		from = next
	}
	t.End = "stopped: " + context.Cause(ctx).Error()
}

// retryLive reports whether a live request that failed with err or answered resp should
// be sent again (LiveRetry; not once ctx ended), after waiting LiveRetry. Before its
// first event (fresh) a reader also retries 404: the stream's create may have had an
// unknown outcome and be retried by a writer later.
func (c *HTTPClient) retryLive(ctx context.Context, resp *http.Response, err error, fresh bool) bool {
	if c.LiveRetry <= 0 || ctx.Err() != nil {
		return false
	}
	if err == nil {
		switch st := resp.StatusCode; {
		case st == http.StatusBadGateway, st == http.StatusServiceUnavailable:
		case st == http.StatusNotFound && fresh:
		default:
			return false
		}
	}
	select {
	case <-ctx.Done():
		return false
	case <-time.After(c.LiveRetry):
		return true
	}
}
