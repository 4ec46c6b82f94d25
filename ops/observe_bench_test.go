package ops

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/engine/memstore"
	"github.com/dsd-project/dsd/httpd"
)

// BenchmarkAppendObserved is the cost of the request log line and the request metrics on
// an append to the in-memory store (compare with BenchmarkAppendBare: the difference is
// the middleware). The log goes to io.Discard through dsd's handler (NewLogHandler).
func BenchmarkAppendObserved(b *testing.B) {
	benchAppend(b, func(h http.Handler) http.Handler {
		return Observe(h, slog.New(NewLogHandler(io.Discard, false, nil)), NewMetrics())
	})
}

func BenchmarkAppendBare(b *testing.B) {
	benchAppend(b, func(h http.Handler) http.Handler { return h })
}

func benchAppend(b *testing.B, wrap func(http.Handler) http.Handler) {
	eng, err := engine.OpenBackend(memstore.New(), engine.Options{SweepInterval: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	defer eng.Close()
	eng.CreateBucket("default")
	h := wrap(httpd.New(httpd.EngineStore{Engine: eng}, httpd.Config{CompatBucket: "default"}))
	serve(h, "PUT", "/v1/stream/b", "x")
	body := strings.Repeat("x", 100)
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest("POST", "/v1/stream/b", strings.NewReader(body))
		req.Header.Set("Content-Type", "text/plain")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusNoContent {
			b.Fatal(w.Code)
		}
	}
}
