package conformance

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// maxResponseBody bounds how much of a non-streaming response the kit reads.
const maxResponseBody = 64 << 20

// Opt shapes one request.
type Opt func(*reqSpec)

type reqSpec struct {
	header  http.Header // may hold non-canonical names, sent as given
	body    []byte
	hasBody bool
	chunked bool
	query   []string // encoded k=v pairs, in order
	noCT    bool     // suppress the helper's default Content-Type
}

// CT sets Content-Type.
func CT(v string) Opt { return H(hContentType, v) }

// NoCT sends no Content-Type, even where a helper would add one.
func NoCT() Opt {
	return func(r *reqSpec) { r.noCT = true; r.header.Del(hContentType) }
}

// H sets a header (canonical name).
func H(name, value string) Opt { return func(r *reqSpec) { r.header.Set(name, value) } }

// RawH sets a header sent with exactly this name's case.
func RawH(name, value string) Opt {
	return func(r *reqSpec) { r.header[name] = append(r.header[name], value) }
}

// Body sets the request body.
func Body(b []byte) Opt { return func(r *reqSpec) { r.body, r.hasBody = b, true } }

// Text sets the request body to s.
func Text(s string) Opt { return Body([]byte(s)) }

// Chunked sends the body with chunked transfer encoding (no Content-Length).
func Chunked() Opt { return func(r *reqSpec) { r.chunked = true } }

// Q adds a query parameter, URL-encoded.
func Q(key, value string) Opt {
	return func(r *reqSpec) { r.query = append(r.query, url.QueryEscape(key)+"="+url.QueryEscape(value)) }
}

// RawQ adds a query fragment exactly as given (e.g. "offset=a&offset=b").
func RawQ(q string) Opt { return func(r *reqSpec) { r.query = append(r.query, q) } }

// Response is a fully read HTTP response.
type Response struct {
	*http.Response
	// Data is the whole body.
	Data []byte
	// Elapsed is the time from sending the request to the end of the body.
	Elapsed time.Duration
}

// Text is the body as a string.
func (r *Response) Text() string { return string(r.Data) }

// Get returns the first value of header name.
func (r *Response) Get(name string) string { return r.Header.Get(name) }

// Has reports whether header name is present.
func (r *Response) Has(name string) bool { return len(r.Header.Values(name)) > 0 }

// httpResponse is a copy of the response whose Body reads Data again (for Gomega's HTTP
// matchers, which read the body when formatting a failure).
func (r *Response) httpResponse() *http.Response {
	c := *r.Response
	c.Body = io.NopCloser(bytes.NewReader(r.Data))
	return &c
}

func (r *Response) String() string {
	return fmt.Sprintf("%s %s -> %d %q", r.Request.Method, r.Request.URL, r.StatusCode, excerpt(r.Data, 200))
}

func excerpt(p []byte, n int) string {
	if len(p) > n {
		return string(p[:n]) + "…"
	}
	return string(p)
}

// client sends requests and records them in a transcript.
type client struct {
	http *http.Client
	tr   *Transcript
}

// newHTTPClient derives the kit's client from the configured one: redirects are not
// followed (a 307 is an answer to check, extension §2.3).
func newHTTPClient(base *http.Client) *http.Client {
	c := *base
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}

// build makes the request for method, rawURL and opts.
func build(ctx context.Context, method, rawURL string, opts []Opt) (*http.Request, *reqSpec, error) {
	spec := &reqSpec{header: http.Header{}}
	for _, o := range opts {
		o(spec)
	}
	if len(spec.query) > 0 {
		sep := "?"
		if strings.Contains(rawURL, "?") {
			sep = "&"
		}
		rawURL += sep + strings.Join(spec.query, "&")
	}
	var body io.Reader
	if spec.hasBody {
		body = bytes.NewReader(spec.body)
	}
	req, err := http.NewRequestWithContext(ctx, method, rawURL, body)
	if err != nil {
		return nil, nil, err
	}
	if spec.chunked {
		req.ContentLength = -1
		req.Body = io.NopCloser(bytes.NewReader(spec.body))
		req.GetBody = nil
	}
	for k, v := range spec.header {
		req.Header[k] = v
	}
	return req, spec, nil
}

// open sends the request and returns the response with its body unread. The body is
// wrapped so that bytes read from it land in the transcript.
func (c *client) open(req *http.Request, spec *reqSpec) (*http.Response, *Exchange, error) {
	ex := &Exchange{
		Start:     time.Now(),
		Method:    req.Method,
		URL:       req.URL.String(),
		ReqHeader: req.Header.Clone(),
	}
	if spec.hasBody {
		ex.ReqBodyLen = int64(len(spec.body))
		if spec.chunked {
			ex.ReqBodyLen = -1
		}
		ex.ReqBody = spec.body
		if len(ex.ReqBody) > requestBodyExcerpt {
			ex.ReqBody = ex.ReqBody[:requestBodyExcerpt]
		}
	}
	c.tr.add(ex)
	resp, err := c.http.Do(req)
	ex.Elapsed = time.Since(ex.Start)
	if err != nil {
		ex.Err = err
		return nil, ex, err
	}
	ex.Status = resp.StatusCode
	ex.RespHeader = resp.Header.Clone()
	resp.Body = &recordingBody{rc: resp.Body, ex: ex}
	return resp, ex, nil
}

// do sends the request and reads the whole body.
func (c *client) do(req *http.Request, spec *reqSpec) (*Response, error) {
	start := time.Now()
	resp, ex, err := c.open(req, spec)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody))
	ex.Elapsed = time.Since(start)
	if err != nil {
		ex.Err = fmt.Errorf("reading body: %w", err)
		return nil, ex.Err
	}
	return &Response{Response: resp, Data: data, Elapsed: time.Since(start)}, nil
}

// recordingBody copies what is read into the exchange's body excerpt.
type recordingBody struct {
	rc io.ReadCloser
	ex *Exchange
}

func (b *recordingBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		b.ex.noteBody(p[:n])
	}
	return n, err
}

func (b *recordingBody) Close() error { return b.rc.Close() }
