package conformance

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
)

// runtime is the state of one Run: the completed config, the run id, the bucket on the
// bucketed surface and the enabled extensions. Specs reach it through current().
type runtime struct {
	cfg  Config
	http *http.Client

	runID         string
	bucket        string // bucketed surface: the bucket streams live in
	createdBucket bool   // the kit created bucket and deletes it after the run
	extensions    []string
	serial        atomic.Int64
}

var (
	activeMu sync.Mutex
	active   *runtime
)

// current is the runtime of the ongoing Run. Specs only run inside Run.
func current() *runtime {
	activeMu.Lock()
	defer activeMu.Unlock()
	if active == nil {
		panic("conformance: specs run only through conformance.Run")
	}
	return active
}

func setActive(rt *runtime) {
	activeMu.Lock()
	active = rt
	activeMu.Unlock()
}

func newRuntime(cfg Config) *runtime {
	return &runtime{cfg: cfg, http: newHTTPClient(cfg.HTTPClient), runID: randomHex(4)}
}

// randomHex is n crypto-random bytes in lowercase hex.
func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

func (rt *runtime) nextSerial() int64 { return rt.serial.Add(1) }

// streamURL is the URL of stream name on the configured surface (name path-escaped).
func (rt *runtime) streamURL(name string) string {
	if rt.cfg.Surface == SurfaceBucketed {
		return rt.cfg.BaseURL + "/" + rt.bucket + "/" + url.PathEscape(name)
	}
	return rt.cfg.BaseURL + rt.cfg.StreamPath + url.PathEscape(name)
}

// extURL is the URL under which stream name's extension sub-resources live: the stream URL,
// or on the flat surface with a CompatBucket {base}/{compat bucket}/{name} (DESIGN D1
// amended).
func (rt *runtime) extURL(name string) string {
	if rt.cfg.Surface == SurfaceFlat && rt.cfg.CompatBucket != "" {
		return rt.cfg.BaseURL + "/" + url.PathEscape(rt.cfg.CompatBucket) + "/" + url.PathEscape(name)
	}
	return rt.streamURL(name)
}

// bucketURL is {base}/{bucket}.
func (rt *runtime) bucketURL(bucket string) string {
	return rt.cfg.BaseURL + "/" + url.PathEscape(bucket)
}

// hasExtension reports whether extension id is enabled for this run.
func (rt *runtime) hasExtension(id string) bool { return contains(rt.extensions, id) }

// deleteQuietly sends DELETE and ignores the outcome (cleanup).
func (rt *runtime) deleteQuietly(ctx context.Context, c *client, u string) {
	req, spec, err := build(ctx, "DELETE", u, nil)
	if err != nil {
		return
	}
	if r, err := c.do(req, spec); err == nil {
		_ = r
	}
}
