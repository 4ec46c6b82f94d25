package linearizability

import (
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"time"
)

// StaleProxy is a deliberately broken caching reverse proxy, for self-tests of the
// checker: it forwards every request to Upstream, but answers catch-up reads (GET
// without a live parameter) from a cache for TTL after the first response, ignoring
// Cache-Control, so that readers see data that appends acknowledged since then do not
// reach. A CDN misconfigured this way breaks read-your-writes (B-5.6-09), and a check
// through it must report a violation.
type StaleProxy struct {
	Upstream *url.URL
	TTL      time.Duration

	once  sync.Once
	rp    *httputil.ReverseProxy
	mu    sync.Mutex
	cache map[string]cachedResponse
}

type cachedResponse struct {
	at     time.Time
	status int
	header http.Header
	body   []byte
}

// ServeHTTP implements http.Handler.
func (p *StaleProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.once.Do(func() {
		p.rp = httputil.NewSingleHostReverseProxy(p.Upstream)
		p.rp.FlushInterval = -1
		p.cache = map[string]cachedResponse{}
	})
	if r.Method != http.MethodGet || r.URL.Query().Has("live") {
		p.rp.ServeHTTP(w, r)
		return
	}
	key := r.URL.RequestURI()
	p.mu.Lock()
	c, ok := p.cache[key]
	p.mu.Unlock()
	if !ok || time.Since(c.at) > p.TTL {
		rec := &recorder{header: http.Header{}, status: http.StatusOK}
		p.rp.ServeHTTP(rec, r)
		c = cachedResponse{at: time.Now(), status: rec.status, header: rec.header, body: rec.body}
		if c.status == http.StatusOK {
			p.mu.Lock()
			p.cache[key] = c
			p.mu.Unlock()
		}
	}
	for k, v := range c.header {
		w.Header()[k] = v
	}
	w.WriteHeader(c.status)
	_, _ = w.Write(c.body)
}

// recorder captures a response in memory.
type recorder struct {
	header http.Header
	status int
	body   []byte
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) WriteHeader(status int)      { r.status = status }
func (r *recorder) Write(b []byte) (int, error) { r.body = append(r.body, b...); return len(b), nil }

var _ io.Writer = (*recorder)(nil)
