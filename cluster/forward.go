package cluster

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// OwnerWait bounds how long a request waits for its partition's owner (a new one after
// a node or leader loss) before it gets 503 with Retry-After (D11).
const OwnerWait = 15 * time.Second

const (
	hForwarded  = "Dsd-Forwarded-By" // set on a forwarded request: the sending node
	hMisdirect  = "Dsd-Not-Owner"    // set on 421: the receiver does not own the partition
	flatPrefix  = "/v1/stream/"      // httpd's compatibility surface
	reservedSeg = "__ds"             // httpd's reserved namespace (served where received)
)

// hopHeaders are not forwarded (RFC 9110 §7.6.1).
var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Te", "Trailer",
	"Transfer-Encoding", "Upgrade", "Expect"}

// Forwarder returns the node's HTTP handler: a request of a partition this node owns is
// served by h (built over the node's Store); any other goes to the partition's owner over
// HTTP, its response (SSE and long-poll included) streamed back as it comes. Forwarding is
// at the HTTP level because it keeps the owner's live reads, woken by its commits, intact
// end to end. While a partition has no reachable owner the request waits for one, up to
// OwnerWait, then gets 503 with Retry-After. A request that reached an owner that died
// before answering is not resent unless it is a GET or HEAD (its outcome is unknown: 503).
// maxBody bounds the request bodies buffered for forwarding (larger ones are cut at
// maxBody+1 bytes, so the owner answers 413).
func (n *Node) Forwarder(h http.Handler, compatBucket string, maxBody int64) http.Handler {
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 64, IdleConnTimeout: time.Minute, DisableCompression: true,
	}
	return &forwarder{n: n, h: h, compat: compatBucket, maxBody: maxBody, tr: tr}
}

type forwarder struct {
	n       *Node
	h       http.Handler
	compat  string
	maxBody int64
	tr      *http.Transport
}

// bucketOf returns the bucket a request path addresses, "" when none (served locally).
func (f *forwarder) bucketOf(escaped string) string {
	if f.compat != "" && strings.HasPrefix(escaped, flatPrefix) {
		return f.compat
	}
	seg, _, _ := strings.Cut(strings.TrimPrefix(escaped, "/"), "/")
	b, err := url.PathUnescape(seg)
	if err != nil || b == reservedSeg {
		return ""
	}
	return b
}

func (f *forwarder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	bucket := f.bucketOf(r.URL.EscapedPath())
	if bucket == "" {
		f.h.ServeHTTP(retryAfterWriter{w}, r)
		return
	}
	k := f.n.PartitionOf(bucket)
	var body []byte
	buffered := false
	deadline := time.Now().Add(OwnerWait)
	for {
		eng, hold, changed := f.n.route(k)
		switch {
		case eng != nil:
			if buffered {
				r.Body = io.NopCloser(bytes.NewReader(body))
			}
			f.h.ServeHTTP(retryAfterWriter{w}, r)
			return
		case r.Header.Get(hForwarded) != "":
			w.Header().Set(hMisdirect, f.n.cfg.NodeID)
			w.WriteHeader(http.StatusMisdirectedRequest)
			return
		case hold.Node != "" && hold.Node != f.n.cfg.NodeID:
			if !buffered {
				b, err := io.ReadAll(io.LimitReader(r.Body, f.maxBody+1))
				if err != nil {
					return // the client went away
				}
				body, buffered = b, true
			}
			if f.forward(w, r, hold, body) {
				return
			}
		}
		if !waitChange(r.Context(), changed, deadline) {
			if r.Context().Err() == nil {
				unavailable(w, "no owner of this bucket's partition answered within 15s")
			}
			return
		}
	}
}

// waitChange waits for a change of ownership, a quarter second (an owner's death shows
// only as a lapsed lease), the deadline or the client's end; false: give up.
func waitChange(ctx context.Context, changed <-chan struct{}, deadline time.Time) bool {
	left := time.Until(deadline)
	if left <= 0 {
		return false
	}
	t := time.NewTimer(min(left, 250*time.Millisecond))
	defer t.Stop()
	select {
	case <-changed:
	case <-t.C:
	case <-ctx.Done():
		return false
	}
	return time.Now().Before(deadline)
}

// forward sends r to the owner and streams its answer back; false when the request
// surely did not take effect there (not sent, or the receiver was not the owner), so it
// may be sent again.
func (f *forwarder) forward(w http.ResponseWriter, r *http.Request, to holder, body []byte) bool {
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.URL.Scheme, out.URL.Host = "http", to.Addr
	out.Host = r.Host
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	out.ContentLength = int64(len(body))
	for _, hh := range hopHeaders {
		out.Header.Del(hh)
	}
	out.Header.Set(hForwarded, f.n.cfg.NodeID)
	resp, err := f.tr.RoundTrip(out)
	if err != nil {
		if r.Context().Err() != nil {
			return true
		}
		if notSent(err) || r.Method == http.MethodGet || r.Method == http.MethodHead {
			return false
		}
		unavailable(w, "the partition's owner failed while handling the request; its outcome is unknown")
		return true
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusMisdirectedRequest && resp.Header.Get(hMisdirect) != "" {
		return false
	}
	copyResponse(w, resp)
	return true
}

// notSent reports whether a transport error happened before the request was sent.
func notSent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// copyResponse writes resp's head and streams its body, flushing after every read.
func copyResponse(w http.ResponseWriter, resp *http.Response) {
	h := w.Header()
	for k, v := range resp.Header {
		h[k] = v
	}
	for _, hh := range hopHeaders {
		h.Del(hh)
	}
	w.WriteHeader(resp.StatusCode)
	rc := http.NewResponseController(w)
	buf := make([]byte, 32<<10)
	for {
		m, err := resp.Body.Read(buf)
		if m > 0 {
			if _, werr := w.Write(buf[:m]); werr != nil {
				return
			}
			_ = rc.Flush()
		}
		if err != nil {
			return
		}
	}
}

// unavailable answers 503 with Retry-After and a JSON error body (D12).
func unavailable(w http.ResponseWriter, why string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Retry-After", "1")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusServiceUnavailable)
	_, _ = io.WriteString(w, `{"error":{"code":"CLUSTER_UNAVAILABLE","message":"`+why+`; retry"}}`+"\n")
}

// retryAfterWriter adds Retry-After to 503 answers of the local handler (a partition
// given up while the request ran); it keeps Flush and Hijack (SSE) working.
type retryAfterWriter struct{ http.ResponseWriter }

func (w retryAfterWriter) WriteHeader(code int) {
	if code == http.StatusServiceUnavailable && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", "1")
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w retryAfterWriter) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }

func (w retryAfterWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

func (w retryAfterWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
