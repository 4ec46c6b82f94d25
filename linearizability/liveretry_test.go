package linearizability

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// flakyLongPoll answers the first fails long-polls with status, then the whole (closed)
// stream.
func flakyLongPoll(fails int32, status int) http.Handler {
	var n atomic.Int32
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) <= fails {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(status)
			return
		}
		w.Header().Set("Stream-Next-Offset", "0000000000000000_0000000000000002")
		w.Header().Set("Stream-Closed", "true")
		w.Write([]byte("ab"))
	})
}

// TestLiveRetry: with LiveRetry a long-poll reader gets past 503s and an early 404 (its
// stream's create retried later) to EOF; without it, the first failure ends the reader.
func TestLiveRetry(t *testing.T) {
	for _, tc := range []struct {
		status int
		retry  time.Duration
		end    string
	}{
		{http.StatusServiceUnavailable, 10 * time.Millisecond, "eof"},
		{http.StatusNotFound, 10 * time.Millisecond, "eof"},
		{http.StatusServiceUnavailable, 0, "status 503"},
		{http.StatusInternalServerError, 10 * time.Millisecond, "status 500"},
	} {
		srv := httptest.NewServer(flakyLongPoll(2, tc.status))
		c := NewHTTPClient(srv.URL, SurfaceFlat, "")
		c.LiveRetry = tc.retry
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		tr := c.Follow(ctx, "s", "long-poll", nil)
		cancel()
		srv.Close()
		if tr.End != tc.end {
			t.Errorf("status %d, LiveRetry %v: reader ended %q, want %q", tc.status, tc.retry, tr.End, tc.end)
		}
	}
}
