package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// sizedServer answers GET ?n=N with N bytes and a Content-Length; with &chunked and N >
// 2048, chunked.
func sizedServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		if !r.URL.Query().Has("chunked") {
			w.Header().Set("Content-Length", strconv.Itoa(n))
		}
		for i := 0; i < n; i += 4096 { // net/http makes each write of a chunked body one chunk
			w.Write([]byte(strings.Repeat("d", min(4096, n-i))))
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &conns
}

func TestDiscardBodyConsumesTheBodyAndKeepsTheConnection(t *testing.T) {
	srv, conns := sizedServer(t)
	c := &http.Client{Transport: &connTransport{Timeout: 5 * time.Second}}
	buf := make([]byte, 7000)
	for _, size := range []int64{300_000, 0, 10, 70_001} {
		resp, err := c.Get(srv.URL + "/?n=" + strconv.FormatInt(size, 10))
		if err != nil {
			t.Fatal(err)
		}
		n, err := discardBody(resp, buf)
		resp.Body.Close()
		if err != nil || n != size {
			t.Fatalf("size %d: discarded %d, %v", size, n, err)
		}
	}
	// Chunked bodies of one or many chunks; the connection is at the next response's start
	// after each, so a read through it still works.
	for _, size := range []int64{5000, 300_000} {
		resp, err := c.Get(srv.URL + "/?chunked&n=" + strconv.FormatInt(size, 10))
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.TransferEncoding) != 1 {
			t.Fatalf("size %d: the server did not chunk (%v)", size, resp.TransferEncoding)
		}
		n, err := discardBody(resp, buf)
		resp.Body.Close()
		if err != nil || n != size {
			t.Fatalf("chunked size %d: discarded %d, %v", size, n, err)
		}
	}
	resp, err := c.Get(srv.URL + "/?n=5000&chunked")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := drain(resp.Body, buf); err != nil || n != 5000 || buf[4999] != 'd' {
		t.Fatalf("read after discards: %d bytes, %v", n, err)
	}
	resp.Body.Close()
	if n := conns.Load(); n != 1 {
		t.Fatalf("7 requests used %d connections, want 1", n)
	}
}
