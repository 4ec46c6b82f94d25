package httpd

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/engine/memstore"
)

// BenchmarkHTTPAppend measures the handler's CPU and allocations per append (no network):
// on the data file with NoSync (bolt: one bbolt transaction per append, as this single
// writer commits alone) and on the in-memory store (memory: the request side alone,
// httptest's request and recorder included).
func BenchmarkHTTPAppend(b *testing.B) {
	b.Run("store=bolt", func(b *testing.B) {
		eng, err := engine.Open(b.TempDir(), engine.Options{NoSync: true, SweepInterval: time.Hour})
		if err != nil {
			b.Fatal(err)
		}
		benchHTTPAppend(b, eng)
	})
	b.Run("store=memory", func(b *testing.B) {
		eng, err := engine.OpenBackend(memstore.New(), engine.Options{SweepInterval: time.Hour})
		if err != nil {
			b.Fatal(err)
		}
		benchHTTPAppend(b, eng)
	})
}

func benchHTTPAppend(b *testing.B, eng *engine.Engine) {
	defer eng.Close()
	eng.CreateBucket("default")
	h := New(EngineStore{Engine: eng}, Config{CompatBucket: "default"})
	w := httptest.NewRecorder()
	put := httptest.NewRequest("PUT", "/v1/stream/b", nil)
	put.Header.Set("Content-Type", "text/plain")
	h.ServeHTTP(w, put)
	body := strings.Repeat("x", 100)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
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
