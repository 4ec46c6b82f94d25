package httpd

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// chunked is a chunked request body of the given chunks.
func chunked(chunks ...string) string {
	var b strings.Builder
	for _, c := range chunks {
		fmt.Fprintf(&b, "%x\r\n%s\r\n", len(c), c)
	}
	return b.String() + "0\r\n\r\n"
}

// The body limit, on one keep-alive connection: a body of exactly MaxBody bytes is
// appended (Content-Length or chunked) and the connection serves the next request; one
// byte more is 413 PAYLOAD_TOO_LARGE, appends nothing and closes the connection, so that
// the rest of an oversized body, here the bytes of a request of its own, is never read
// as the next request.
func TestBodyLimitOnKeepAliveConnection(t *testing.T) {
	const max = 10
	srv, _ := liveServer(t, Config{MaxBody: max, BodyIdleTimeout: time.Minute})
	mustCreate(t, srv.URL+"/v1/stream/s")
	addr := srv.Listener.Addr().String()
	smuggled := "POST /v1/stream/s HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\nbad"
	head := "POST /v1/stream/s HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\n"
	atLimit := strings.Repeat("a", max)
	for _, tc := range []struct {
		name, oversized string
	}{
		{"chunked, one chunk", head + "Transfer-Encoding: chunked\r\n\r\n" + chunked(atLimit+"b"+smuggled)},
		{"chunked, the extra byte alone", head + "Transfer-Encoding: chunked\r\n\r\n" + chunked(atLimit, "b", smuggled)},
		{"chunked, in small chunks", head + "Transfer-Encoding: chunked\r\n\r\n" + chunked("aaa", "aaa", "aaaa", "b")},
		{"content-length", head + fmt.Sprintf("Content-Length: %d\r\n\r\n", max+1) + atLimit + "b"},
	} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		r := bufio.NewReader(c)
		exchange := func(req string) *http.Response {
			t.Helper()
			if _, err := io.WriteString(c, req); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			resp, err := http.ReadResponse(r, nil)
			if err != nil {
				t.Fatalf("%s: no response: %v", tc.name, err)
			}
			io.ReadAll(resp.Body)
			resp.Body.Close()
			return resp
		}
		for _, ok := range []string{
			head + fmt.Sprintf("Content-Length: %d\r\n\r\n", max) + atLimit,
			head + "Transfer-Encoding: chunked\r\n\r\n" + chunked(atLimit[:4], atLimit[4:]),
		} {
			if resp := exchange(ok); resp.StatusCode != 204 || resp.Close {
				t.Fatalf("%s: a body of MaxBody bytes: %d close=%v; want 204, kept alive", tc.name, resp.StatusCode, resp.Close)
			}
		}
		resp := exchange(tc.oversized)
		if resp.StatusCode != 413 || !resp.Close {
			t.Fatalf("%s: %d close=%v; want 413 with Connection: close", tc.name, resp.StatusCode, resp.Close)
		}
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if extra, err := r.ReadString(0); err == nil || extra != "" {
			t.Fatalf("%s: after the 413 the connection sent %q (%v); want it closed", tc.name, extra, err)
		}
		c.Close()
	}
	resp, err := http.Get(srv.URL + "/v1/stream/s?offset=-1")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := strings.Repeat(atLimit, 8); string(got) != want {
		t.Fatalf("stream = %q; want only the 8 bodies of MaxBody bytes", got)
	}
}
