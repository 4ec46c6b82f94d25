// Command rrproxy is a round-robin HTTP proxy for tests: each request goes to the next of
// several dsd nodes, so that a client's consecutive requests (a create, its appends, its
// reads) land on different nodes and exercise the cluster's forwarding. A node that
// refuses the connection (killed) is skipped: the request, not yet sent, goes to the
// next one; so is one that fails before answering a GET or HEAD (safe to resend), like
// a load balancer's health check would.
//
//	rrproxy --listen 127.0.0.1:0 http://127.0.0.1:4437 http://127.0.0.1:4438 ...
//
// It prints "listening on http://ADDR" once it serves. Responses are streamed (SSE,
// long-poll).
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"sync/atomic"
	"time"

	"github.com/dsd-project/dsd/httpd"
)

// rr sends each request to the next target, skipping targets that refuse to connect.
type rr struct {
	targets []*url.URL
	next    atomic.Uint64
	tr      http.RoundTripper
}

func (t *rr) RoundTrip(in *http.Request) (*http.Response, error) {
	var body []byte
	if in.Body != nil && in.Body != http.NoBody {
		b, err := io.ReadAll(in.Body) // the transport closes a body it failed to send
		in.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	var err error
	first := t.next.Add(1)
	for i := range uint64(2 * len(t.targets)) {
		u := t.targets[(first+i)%uint64(len(t.targets))]
		req := in.Clone(in.Context())
		req.URL.Scheme, req.URL.Host = u.Scheme, u.Host
		if body != nil {
			req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		}
		var resp *http.Response
		if resp, err = t.tr.RoundTrip(req); err == nil {
			return resp, nil
		}
		var op *net.OpError
		idempotent := req.Method == http.MethodGet || req.Method == http.MethodHead
		if !idempotent && (!errors.As(err, &op) || op.Op != "dial") {
			return nil, err // maybe applied: the client must know
		}
	}
	return nil, err
}

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "listen address")
	flag.Parse()
	var targets []*url.URL
	for _, a := range flag.Args() {
		u, err := url.Parse(a)
		if err != nil || u.Host == "" {
			fmt.Fprintf(os.Stderr, "rrproxy: bad node URL %q\n", a)
			os.Exit(2)
		}
		targets = append(targets, u)
	}
	if len(targets) == 0 {
		fmt.Fprintln(os.Stderr, "usage: rrproxy [--listen ADDR] NODE_URL...")
		os.Exit(2)
	}
	tr := &http.Transport{DialContext: (&net.Dialer{Timeout: time.Second}).DialContext,
		MaxIdleConnsPerHost: 64, DisableCompression: true}
	p := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.Host = r.In.Host
			r.Out.URL.RawQuery = r.In.URL.RawQuery // as sent, bad escapes included
		},
		Transport:     &rr{targets: targets, tr: tr},
		FlushInterval: -1,
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	log.SetFlags(0)
	log.Printf("rrproxy: listening on http://%s", ln.Addr())
	// Requests net/http refuses before any handler (a bad escape in the target) get dsd's
	// JSON error body here too, as they would from the node itself.
	log.Fatal(http.Serve(httpd.JSONErrorListener(ln), p))
}
