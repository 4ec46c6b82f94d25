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
	flush   bool // flush after every event: a chunked body, read piecewise
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
		if f.flush {
			w.(http.Flusher).Flush()
			time.Sleep(time.Millisecond)
		}
	}
	if pos == len(f.msgs) {
		fmt.Fprintf(w, "event: control\ndata:{\"streamNextOffset\":\"o+%d\",\"streamClosed\":true,\"upToDate\":true}\n\n", pos)
	}
}

// subscriberPaths are the two ways a subscriber reads its responses.
var subscriberPaths = []string{"net/http", "epoll"}

// testSubscriber returns a subscriber of u reading through path; an epoll subscriber's poller
// runs until the test ends, which checks that it then holds no connection.
func testSubscriber(t *testing.T, path, u, offset string) *subscriber {
	t.Helper()
	s := newSubscriber(u, newSSEClient(1), offset)
	if path == "epoll" {
		p, err := newSSEPoller()
		if err != nil {
			t.Skipf("no poller: %v", err)
		}
		stop, stopped := make(chan struct{}), make(chan struct{})
		go func() { p.Run(stop); close(stopped) }()
		t.Cleanup(func() {
			open := p.open()
			close(stop)
			<-stopped
			if open != 0 {
				t.Errorf("poller still holds %d connections after Run returned", open)
			}
		})
		s.Poller = p
	}
	return s
}

// runCollecting runs a subscriber of url from offset on path until the stream closes (at
// most attempts failed connections in a row, 10 s in all) and returns it with the data
// events it received, in order.
func runCollecting(t *testing.T, path, url, offset string, attempts int) (*subscriber, []string) {
	t.Helper()
	s := testSubscriber(t, path, url, offset)
	var got []string
	s.OnData = func(data []byte, _ time.Time) { got = append(got, string(data)) }
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Run(ctx, time.Millisecond, attempts); err != nil {
		t.Fatal(err)
	}
	return s, got
}

func TestSubscriberResumesFromLastControlOffset(t *testing.T) {
	for _, path := range subscriberPaths {
		for _, b64 := range []bool{false, true} {
			for _, flush := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/base64=%v/flush=%v", path, b64, flush), func(t *testing.T) {
					f := &fakeSSE{msgs: []string{"m0", "m1", "m2", "m3", "m4"}, base64: b64, flush: flush}
					srv := httptest.NewServer(f)
					defer srv.Close()
					s, got := runCollecting(t, path, srv.URL+"/v1/stream/x", "-1", 3)
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
	}
}

// rawSSE answers every request on a hijacked connection with head, then writes body in
// pieces of at most piece bytes, each in its own write a little apart, then closes: framings
// net/http's server does not produce (a body ended by the close, Node-sized chunks).
type rawSSE struct {
	head, body string
	piece      int
}

func (r rawSSE) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	fmt.Fprint(conn, r.head)
	for b := r.body; len(b) > 0; {
		n := min(r.piece, len(b))
		if _, err := fmt.Fprint(conn, b[:n]); err != nil {
			return
		}
		b = b[n:]
		time.Sleep(200 * time.Microsecond)
	}
}

// chunk frames s as one chunk of a chunked body.
func chunk(s string) string { return fmt.Sprintf("%x\r\n%s\r\n", len(s), s) }

func TestSubscriberReadsChunkedAndCloseDelimitedBodies(t *testing.T) {
	events := "event: data\ndata:a\n\nevent: control\ndata:{\"streamNextOffset\":\"o+1\"}\n\n" +
		"event: data\ndata:b\n\nevent: control\ndata:{\"streamNextOffset\":\"o+2\",\"streamClosed\":true}\n\n"
	var chunked string
	for _, line := range strings.SplitAfter(events, "\n") { // one chunk per line, as Node writes
		if line != "" {
			chunked += chunk(line)
		}
	}
	chunked += "0\r\n\r\n"
	servers := map[string]rawSSE{
		"chunked":         {head: "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n", body: chunked, piece: 7},
		"close-delimited": {head: "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n", body: events, piece: 5},
	}
	for _, path := range subscriberPaths {
		for name, raw := range servers {
			t.Run(path+"/"+name, func(t *testing.T) {
				srv := httptest.NewServer(raw)
				defer srv.Close()
				s, got := runCollecting(t, path, srv.URL+"/s", "-1", 1)
				if strings.Join(got, ",") != "a,b" || !s.Closed || s.Offset != "o+2" || s.Reconnects != 0 {
					t.Fatalf("data %q closed %v offset %q reconnects %d", got, s.Closed, s.Offset, s.Reconnects)
				}
			})
		}
	}
}

// A response that ends without closing the stream is resumed from its last control event,
// whichever way it ends: a close-delimited body at the close, a chunked one at its last chunk.
func TestSubscriberReconnectsWhenTheServerEndsTheResponse(t *testing.T) {
	var mu sync.Mutex
	var offsets []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		offsets = append(offsets, r.URL.Query().Get("offset"))
		n := len(offsets)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		closed := ""
		if n == 3 {
			closed = `,"streamClosed":true`
		}
		fmt.Fprintf(w, "event: data\ndata:d%d\n\nevent: control\ndata:{\"streamNextOffset\":\"o+%d\"%s}\n\n", n, n, closed)
		w.(http.Flusher).Flush() // chunked
	}))
	defer srv.Close()
	for _, path := range subscriberPaths {
		t.Run(path, func(t *testing.T) {
			mu.Lock()
			offsets = nil
			mu.Unlock()
			s, got := runCollecting(t, path, srv.URL+"/s", "now", 1)
			if strings.Join(got, ",") != "d1,d2,d3" || s.Reconnects != 2 || !s.Closed {
				t.Fatalf("data %q reconnects %d closed %v", got, s.Reconnects, s.Closed)
			}
			if strings.Join(offsets, ",") != "now,o+1,o+2" {
				t.Fatalf("requested offsets %q", offsets)
			}
		})
	}
}

// Cancelling the context ends a subscriber that is following a stream that stays open.
func TestSubscriberStopsWhenTheContextEnds(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: control\ndata:{\"streamNextOffset\":\"o+0\"}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	for _, path := range subscriberPaths {
		t.Run(path, func(t *testing.T) {
			s := testSubscriber(t, path, srv.URL+"/s", "now")
			ctx, cancel := context.WithCancel(context.Background())
			ran := make(chan error, 1)
			go func() { ran <- s.Run(ctx, time.Millisecond, 0) }()
			select {
			case <-s.connected:
			case <-time.After(10 * time.Second):
				t.Fatal("no first control event")
			}
			cancel()
			select {
			case err := <-ran:
				if err != nil || s.Closed {
					t.Fatalf("Run = %v, closed %v", err, s.Closed)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Run did not return after the context ended")
			}
		})
	}
}

func TestSubscriberGivesUpAfterFailedAttempts(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	for _, path := range subscriberPaths {
		t.Run(path, func(t *testing.T) {
			s := testSubscriber(t, path, srv.URL+"/v1/stream/missing", "now")
			if err := s.Run(context.Background(), time.Millisecond, 2); err == nil {
				t.Fatal("Run on a 404 stream returned nil")
			}
			if s.Statuses["404"] != 2 {
				t.Fatalf("statuses %v, want two 404s", s.Statuses)
			}
		})
	}
}
