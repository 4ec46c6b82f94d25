package main

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// connServer counts the connections it accepts; /close answers with Connection: close,
// /slow answers after 200 ms, anything else echoes the request body.
func connServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/close":
			w.Header().Set("Connection", "close")
		case "/slow":
			time.Sleep(200 * time.Millisecond)
		}
		b, _ := io.ReadAll(r.Body)
		w.Write(b)
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

func roundTrip(t *testing.T, c *http.Client, url, body string) (string, error) {
	t.Helper()
	resp, err := c.Post(url, "text/plain", strings.NewReader(body))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func TestConnTransportReusesOneConnection(t *testing.T) {
	srv, conns := connServer(t)
	c := &http.Client{Transport: &connTransport{Timeout: 5 * time.Second}}
	for i := range 20 {
		want := strings.Repeat("x", i)
		if got, err := roundTrip(t, c, srv.URL+"/echo", want); err != nil || got != want {
			t.Fatalf("request %d: %q, %v; want %q", i, got, err, want)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Fatalf("20 requests used %d connections, want 1", n)
	}
}

func TestConnTransportRedialsAfterClose(t *testing.T) {
	srv, conns := connServer(t)
	c := &http.Client{Transport: &connTransport{Timeout: 5 * time.Second}}
	for i := range 3 {
		if got, err := roundTrip(t, c, srv.URL+"/close", "a"); err != nil || got != "a" {
			t.Fatalf("request %d after Connection: close: %q, %v", i, got, err)
		}
	}
	if n := conns.Load(); n != 3 {
		t.Fatalf("3 Connection: close answers led to %d connections, want 3", n)
	}
}

func TestConnTransportRefusesWhileBodyOpen(t *testing.T) {
	srv, _ := connServer(t)
	tr := &connTransport{Timeout: 5 * time.Second}
	c := &http.Client{Transport: tr}
	resp, err := c.Post(srv.URL+"/echo", "text/plain", strings.NewReader("open"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Post(srv.URL+"/echo", "text/plain", strings.NewReader("b")); err == nil {
		t.Fatal("second request on a connection whose body is still open was sent")
	}
	resp.Body.Close() // closed unread: the connection is dropped, the next request redials
	if got, err := roundTrip(t, c, srv.URL+"/echo", "c"); err != nil || got != "c" {
		t.Fatalf("after closing the body: %q, %v", got, err)
	}
}

func TestConnTransportTimeout(t *testing.T) {
	srv, _ := connServer(t)
	c := &http.Client{Transport: &connTransport{Timeout: 50 * time.Millisecond}}
	if _, err := roundTrip(t, c, srv.URL+"/slow", "a"); err == nil {
		t.Fatal("a 200 ms answer beat a 50 ms timeout")
	}
	c = &http.Client{Transport: &connTransport{Timeout: time.Second}}
	if got, err := roundTrip(t, c, srv.URL+"/slow", "a"); err != nil || got != "a" {
		t.Fatalf("slow answer within the timeout: %q, %v", got, err)
	}
}
