package main

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// A breaking reverse proxy: it forwards every request to a real server and lets a
// mutation rewrite the request, the response, or single SSE events, so that each mutant
// breaks exactly one requirement of an otherwise conforming server.

// exchange is one proxied request and its response, as the hooks see them.
type exchange struct {
	in      *http.Request // the client's request (body already read)
	reqBody []byte
	out     *http.Request // the request sent upstream; hooks may rewrite it

	status   int
	header   http.Header
	respBody []byte // nil for SSE responses
	sse      bool
	note     string // scratch space from request to response hook
}

// query is the client's query parameter name.
func (x *exchange) query(name string) string { return x.in.URL.Query().Get(name) }

// mutation breaks one behaviour. Nil hooks pass through.
type mutation struct {
	// request rewrites the outgoing request before it is sent.
	request func(p *proxy, x *exchange)
	// response rewrites status, headers and (buffered) body before they reach the client.
	// For SSE it runs before the headers are written, with respBody nil.
	response func(p *proxy, x *exchange)
	// sseEvent rewrites one SSE event (its lines, without the blank line); nil drops it.
	sseEvent func(x *exchange, lines []string) []string
}

type proxy struct {
	upstream *url.URL
	client   *http.Client
	m        mutation

	mu    sync.Mutex
	state map[string]string
}

func newProxy(upstream string, m mutation) *proxy {
	u, err := url.Parse(upstream)
	if err != nil {
		panic(err)
	}
	return &proxy{
		upstream: u,
		client: &http.Client{
			Transport:     &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 32},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		m:     m,
		state: map[string]string{},
	}
}

// remember and recall keep per-key state across exchanges (e.g. a stream's first offset).
func (p *proxy) remember(key, value string) {
	p.mu.Lock()
	p.state[key] = value
	p.mu.Unlock()
}

func (p *proxy) recall(key string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state[key]
}

var hopHeaders = map[string]bool{
	"Connection": true, "Keep-Alive": true, "Transfer-Encoding": true, "Content-Length": true,
	"Te": true, "Trailer": true, "Upgrade": true, "Proxy-Connection": true, "Accept-Encoding": true,
}

func copyHeaders(dst, src http.Header) {
	for k, v := range src {
		if !hopHeaders[http.CanonicalHeaderKey(k)] {
			dst[k] = append([]string(nil), v...)
		}
	}
}

// send forwards method, requestURI, header and body upstream.
func (p *proxy) send(in *http.Request, method, requestURI string, header http.Header, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(in.Context(), method, p.upstream.Scheme+"://"+p.upstream.Host+requestURI, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	copyHeaders(req.Header, header)
	return p.client.Do(req)
}

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	out, err := http.NewRequestWithContext(r.Context(), r.Method, p.upstream.Scheme+"://"+p.upstream.Host+r.URL.RequestURI(), nil)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	copyHeaders(out.Header, r.Header)
	x := &exchange{in: r, reqBody: body, out: out}
	if p.m.request != nil {
		p.m.request(p, x)
	}
	x.out.Body = io.NopCloser(bytes.NewReader(x.reqBody))
	x.out.ContentLength = int64(len(x.reqBody))
	resp, err := p.client.Do(x.out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	x.status, x.header = resp.StatusCode, http.Header{}
	copyHeaders(x.header, resp.Header)
	x.sse = strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")

	if x.sse {
		if p.m.response != nil {
			p.m.response(p, x)
		}
		copyHeaders(w.Header(), x.header)
		w.WriteHeader(x.status)
		p.pumpSSE(w, x, resp.Body)
		return
	}
	x.respBody, _ = io.ReadAll(resp.Body)
	if p.m.response != nil {
		p.m.response(p, x)
	}
	copyHeaders(w.Header(), x.header)
	w.WriteHeader(x.status)
	if r.Method != http.MethodHead && x.status != http.StatusNoContent && x.status != http.StatusNotModified {
		_, _ = w.Write(x.respBody)
	}
}

// pumpSSE forwards an event stream event by event, applying sseEvent.
func (p *proxy) pumpSSE(w http.ResponseWriter, x *exchange, body io.Reader) {
	fl, _ := w.(http.Flusher)
	if fl != nil {
		fl.Flush()
	}
	br := bufio.NewReader(body)
	var lines []string
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			line = strings.TrimRight(line, "\r\n")
			if line != "" {
				lines = append(lines, line)
			} else if len(lines) > 0 {
				if p.m.sseEvent != nil {
					lines = p.m.sseEvent(x, lines)
				}
				if len(lines) > 0 {
					_, _ = io.WriteString(w, strings.Join(lines, "\n")+"\n\n")
					if fl != nil {
						fl.Flush()
					}
				}
				lines = nil
			}
		}
		if err != nil {
			return
		}
	}
}
