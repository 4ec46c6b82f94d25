// Package httpdbench is the append benchmark that httpd's and ops's benchmarks share: one
// handler over an engine, 100-byte appends to one stream of the flat surface, through
// httptest (no network).
package httpdbench

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/engine/memstore"
	"github.com/dsd-project/dsd/httpd"
)

// MemoryEngine opens an engine on the in-memory store, without sweeps during a run.
func MemoryEngine(b *testing.B) *engine.Engine {
	eng, err := engine.OpenBackend(memstore.New(), engine.Options{SweepInterval: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	return eng
}

// Appends creates stream "b" of the flat surface, then runs the benchmark loop: one
// 100-byte text/plain POST per iteration through wrap(handler), each answered 204. It
// closes eng.
func Appends(b *testing.B, eng *engine.Engine, wrap func(http.Handler) http.Handler) {
	defer eng.Close()
	eng.CreateBucket("default")
	h := wrap(httpd.New(httpd.EngineStore{Engine: eng}, httpd.Config{CompatBucket: "default"}))
	put := httptest.NewRequest("PUT", "/v1/stream/b", nil)
	put.Header.Set("Content-Type", "text/plain")
	h.ServeHTTP(httptest.NewRecorder(), put)
	body := strings.Repeat("x", 100)
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest("POST", "/v1/stream/b", strings.NewReader(body))
		req.Header.Set("Content-Type", "text/plain")
		w := deadlineRecorder{httptest.NewRecorder()}
		h.ServeHTTP(w, req)
		if w.Code != http.StatusNoContent {
			b.Fatal(w.Code)
		}
	}
}

// deadlineRecorder is a recorder that takes read deadlines as net/http's writer does
// (httptest's refuses them with an error built per call, which no server pays).
type deadlineRecorder struct{ *httptest.ResponseRecorder }

func (deadlineRecorder) SetReadDeadline(time.Time) error { return nil }
