package httpd

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"
)

// rawRequest opens a connection to srv and sends a request head (and the first part of a
// body), leaving the rest unsent.
func rawRequest(t *testing.T, addr, head string, body []byte) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, head); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(body); err != nil {
		t.Fatal(err)
	}
	return c
}

// readResponse reads one response from c within timeout.
func readResponse(t *testing.T, c net.Conn, timeout time.Duration) (*http.Response, string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(timeout))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no response within %v: %v", timeout, err)
	}
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func postHead(path string, length int) string {
	return fmt.Sprintf("POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n", path, length)
}

// A body to a missing stream is answered 404 at once, before the body arrives, and the
// connection closes (issue 20 item 3; A-07 step 2 comes before reading).
func TestBodyToMissingStreamAnsweredAtOnce(t *testing.T) {
	srv, _ := liveServer(t, Config{BodyIdleTimeout: time.Minute})
	addr := srv.Listener.Addr().String()
	for _, path := range []string{"/v1/stream/nope", "/default/nope/snapshot/0000000000000000_0000000000000000"} {
		head := postHead(path, 32<<20)
		if strings.Contains(path, "/snapshot") {
			head = strings.Replace(head, "POST", "PUT", 1)
		}
		start := time.Now()
		c := rawRequest(t, addr, head, []byte("partial"))
		resp, body := readResponse(t, c, 2*time.Second)
		if resp.StatusCode != 404 || !resp.Close {
			t.Errorf("%s: %d close=%v %s; want 404 with Connection: close", path, resp.StatusCode, resp.Close, body)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s: answered after %v", path, d)
		}
	}
}

// A stalled body ends after BodyIdleTimeout with 408 BODY_TIMEOUT, not after minutes.
func TestStalledBodyTimesOut(t *testing.T) {
	srv, _ := liveServer(t, Config{BodyIdleTimeout: 200 * time.Millisecond})
	mustCreate(t, srv.URL+"/v1/stream/s")
	c := rawRequest(t, srv.Listener.Addr().String(), postHead("/v1/stream/s", 1<<20), make([]byte, 1000))
	start := time.Now()
	resp, body := readResponse(t, c, 3*time.Second)
	if resp.StatusCode != 408 || !strings.Contains(body, "BODY_TIMEOUT") || !resp.Close {
		t.Fatalf("%d close=%v %s; want 408 BODY_TIMEOUT with Connection: close", resp.StatusCode, resp.Close, body)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("answered after %v; the idle timeout is 200ms", d)
	}
}

// Bodies past the in-flight budget get 503 SERVER_BUSY with Retry-After; the bytes come
// back when the requests end.
func TestBodyBudget(t *testing.T) {
	srv, h := liveServer(t, Config{BodyBudget: 4 * bodyPiece, MaxBody: 3 * bodyPiece, BodyIdleTimeout: time.Minute})
	mustCreate(t, srv.URL+"/v1/stream/s")
	addr := srv.Listener.Addr().String()
	// The first stalled body holds 3 pieces; the second gets one more, then none.
	c1 := rawRequest(t, addr, postHead("/v1/stream/s", 3*bodyPiece), make([]byte, 2*bodyPiece+1))
	waitFor(t, func() bool { return h.bodies.inUse() == 3*bodyPiece })
	c2 := rawRequest(t, addr, postHead("/v1/stream/s", 3*bodyPiece), make([]byte, 2*bodyPiece))
	resp, body := readResponse(t, c2, 2*time.Second)
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "SERVER_BUSY") || !resp.Close {
		t.Fatalf("%d %v %s; want 503 SERVER_BUSY, Retry-After, Connection: close", resp.StatusCode, resp.Header, body)
	}
	if _, err := c1.Write(make([]byte, bodyPiece-1)); err != nil {
		t.Fatal(err)
	}
	if resp, body := readResponse(t, c1, 2*time.Second); resp.StatusCode != 204 {
		t.Fatalf("the body within the budget: %d %s", resp.StatusCode, body)
	}
	waitFor(t, func() bool { return h.bodies.inUse() == 0 })
}

// A stalled body holds what arrived, not its Content-Length (issue 20 item 3: today's
// code allocated the whole Content-Length before reading).
func TestStalledBodiesHoldWhatArrived(t *testing.T) {
	srv, h := liveServer(t, Config{MaxBody: 32 << 20, BodyIdleTimeout: time.Minute})
	mustCreate(t, srv.URL+"/v1/stream/s")
	const n = 8
	before := heapInUse()
	for range n {
		rawRequest(t, srv.Listener.Addr().String(), postHead("/v1/stream/s", 32<<20), make([]byte, 16<<10))
	}
	waitFor(t, func() bool { return h.bodies.inUse() == n*bodyPiece })
	if grew := heapInUse() - before; grew > 8<<20 {
		t.Fatalf("%d stalled 32 MiB bodies with 16 KiB sent grew the heap by %d MiB", n, grew>>20)
	}
}

func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}

func mustCreate(t *testing.T, url string) {
	t.Helper()
	req, _ := http.NewRequest("PUT", url, nil)
	req.Header.Set("Content-Type", "text/plain")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("create %s: %v %v", url, resp, err)
	}
	resp.Body.Close()
}

// waitFor polls cond for up to 2 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for i := 0; i < 200; i++ {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("condition not reached within 2s")
}

// infoRecorder is a middleware's writer carrying a RequestInfo (RequestInfoWriter).
type infoRecorder struct {
	*httptest.ResponseRecorder
	ri RequestInfo
}

func (w *infoRecorder) RequestInfo() *RequestInfo { return &w.ri }

// The handler reads a body without replacing the request's (net/http must find its own
// there, to end a connection whose body was not read without a reset), and counts its
// bytes, decoded, into the RequestInfo of the writer it was given.
func TestBodyLeavesTheRequestsOwnAndIsCounted(t *testing.T) {
	s := newTestServer(t)
	s.do(http.MethodPut, "/v1/stream/s", "", "Content-Type: text/plain")
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	zw.Write([]byte("hello world"))
	zw.Close()
	for _, c := range []struct{ body, coding string }{{"hello world", ""}, {zipped.String(), "gzip"}} {
		req := httptest.NewRequest(http.MethodPost, "/v1/stream/s", strings.NewReader(c.body))
		req.Header.Set("Content-Type", "text/plain")
		if c.coding != "" {
			req.Header.Set("Content-Encoding", c.coding)
		}
		own := req.Body
		w := &infoRecorder{ResponseRecorder: httptest.NewRecorder()}
		s.h.ServeHTTP(w, req)
		if w.Code != http.StatusNoContent || req.Body != own {
			t.Errorf("%q: %d, request body replaced: %v", c.coding, w.Code, req.Body != own)
		}
		if w.ri.BodyBytes != 11 || w.ri.Route != "stream" {
			t.Errorf("%q: RequestInfo %+v, want 11 body bytes on route stream", c.coding, w.ri)
		}
	}
}
