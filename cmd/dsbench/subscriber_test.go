package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeSSE serves a closed stream of msgs over SSE and ends every response after at most two
// data events, as a server ending SSE responses every 60 s would. Offsets look like "o+N" so
// that a client that forgets to URL-encode them sends "o N" and gets a 400.
type fakeSSE struct {
	msgs    []string
	base64  bool
	mu      sync.Mutex
	offsets []string // offsets requested, in order
}

func (f *fakeSSE) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	off := r.URL.Query().Get("offset")
	f.mu.Lock()
	f.offsets = append(f.offsets, off)
	f.mu.Unlock()
	if r.URL.Query().Get("live") != "sse" || (off != "-1" && !strings.HasPrefix(off, "o+")) {
		http.Error(w, "bad offset "+off, http.StatusBadRequest)
		return
	}
	pos := 0
	if off != "-1" {
		pos, _ = strconv.Atoi(strings.TrimPrefix(off, "o+"))
	}
	w.Header().Set("Content-Type", "text/event-stream")
	if f.base64 {
		w.Header().Set("stream-sse-data-encoding", "base64")
	}
	for sent := 0; sent < 2 && pos < len(f.msgs); sent++ {
		data := f.msgs[pos]
		if f.base64 {
			data = base64.StdEncoding.EncodeToString([]byte(data))
			data = data[:2] + "\n" + data[2:] // base64 may be split over data: lines (§5.8)
		}
		pos++
		fmt.Fprintf(w, "event: data\n")
		for _, line := range strings.Split(data, "\n") {
			fmt.Fprintf(w, "data:%s\n", line)
		}
		fmt.Fprintf(w, "\nevent: control\ndata:{\"streamNextOffset\":\"o+%d\",\"streamCursor\":\"1\"}\n\n", pos)
	}
	if pos == len(f.msgs) {
		fmt.Fprintf(w, "event: control\ndata:{\"streamNextOffset\":\"o+%d\",\"streamClosed\":true,\"upToDate\":true}\n\n", pos)
	}
}

func TestSubscriberResumesFromLastControlOffset(t *testing.T) {
	for _, b64 := range []bool{false, true} {
		t.Run(fmt.Sprintf("base64=%v", b64), func(t *testing.T) {
			f := &fakeSSE{msgs: []string{"m0", "m1", "m2", "m3", "m4"}, base64: b64}
			srv := httptest.NewServer(f)
			defer srv.Close()
			s := newSubscriber(srv.URL+"/v1/stream/x", newSSEClient(1), "-1")
			var got []string
			s.OnData = func(data []byte, _ time.Time) { got = append(got, string(data)) }
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := s.Run(ctx, time.Millisecond, 3); err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, ",") != "m0,m1,m2,m3,m4" {
				t.Fatalf("data = %q", got)
			}
			if !s.Closed || s.Reconnects != 2 || s.Offset != "o+5" {
				t.Fatalf("closed=%v reconnects=%d offset=%q", s.Closed, s.Reconnects, s.Offset)
			}
			if strings.Join(f.offsets, ",") != "-1,o+2,o+4" {
				t.Fatalf("requested offsets %q", f.offsets)
			}
		})
	}
}

func TestSubscriberGivesUpAfterFailedAttempts(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	s := newSubscriber(srv.URL+"/v1/stream/missing", newSSEClient(1), "now")
	if err := s.Run(context.Background(), time.Millisecond, 2); err == nil {
		t.Fatal("Run on a 404 stream returned nil")
	}
	if s.Statuses["404"] != 2 {
		t.Fatalf("statuses %v, want two 404s", s.Statuses)
	}
}
