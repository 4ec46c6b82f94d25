package ops

import (
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/dsd-project/dsd/httpd/httpdbench"
)

// BenchmarkAppendObserved is the cost of the request log line and the request metrics on
// an append to the in-memory store (compare with BenchmarkAppendBare: the difference is
// the middleware). The log goes to io.Discard through dsd's handler (NewLogHandler).
func BenchmarkAppendObserved(b *testing.B) {
	httpdbench.Appends(b, httpdbench.MemoryEngine(b), func(h http.Handler) http.Handler {
		return Observe(h, slog.New(NewLogHandler(io.Discard, false, nil)), NewMetrics())
	})
}

func BenchmarkAppendBare(b *testing.B) {
	httpdbench.Appends(b, httpdbench.MemoryEngine(b), func(h http.Handler) http.Handler { return h })
}
