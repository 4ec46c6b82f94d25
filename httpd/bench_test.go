package httpd_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/httpd/httpdbench"
)

// BenchmarkHTTPAppend measures the handler's CPU and allocations per append (no network):
// on the data file with NoSync (bolt: one bbolt transaction per append, as this single
// writer commits alone) and on the in-memory store (memory: the request side alone,
// httptest's request and recorder included).
func BenchmarkHTTPAppend(b *testing.B) {
	bare := func(h http.Handler) http.Handler { return h }
	b.Run("store=bolt", func(b *testing.B) {
		eng, err := engine.Open(b.TempDir(), engine.Options{NoSync: true, SweepInterval: time.Hour})
		if err != nil {
			b.Fatal(err)
		}
		httpdbench.Appends(b, eng, bare)
	})
	b.Run("store=memory", func(b *testing.B) { httpdbench.Appends(b, httpdbench.MemoryEngine(b), bare) })
}
