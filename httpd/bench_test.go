package httpd

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/dsd-project/dsd/engine"
)

// BenchmarkHTTPAppend measures the handler's CPU and allocations per append (NoSync
// storage, no network).
func BenchmarkHTTPAppend(b *testing.B) {
	eng, err := engine.Open(b.TempDir(), engine.Options{NoSync: true, SweepInterval: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
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
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusNoContent {
			b.Fatal(w.Code)
		}
	}
}
