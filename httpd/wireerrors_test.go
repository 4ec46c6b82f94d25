package httpd

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// serveWrapped serves h on a loopback JSONErrorListener and returns its address.
func serveWrapped(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, MaxHeaderBytes: 4096, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(JSONErrorListener(ln))
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// rawExchange sends each raw request on one connection and reads a response after each.
func rawExchange(t *testing.T, addr string, reqs ...string) []*http.Response {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	var out []*http.Response
	for _, req := range reqs {
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("reading the response to %q: %v", req, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body = io.NopCloser(strings.NewReader(string(body)))
		out = append(out, resp)
	}
	return out
}

// The requests net/http refuses before any handler runs get the D7 JSON error body, named
// after what is wrong (issue: every 4xx is JSON); a handler's own responses are untouched.
func TestNetHTTPRefusalsAreJSON(t *testing.T) {
	addr := serveWrapped(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Connection", "close")
		w.WriteHeader(400)
		_, _ = io.WriteString(w, "400 Bad Request") // as close to net/http's own as a handler gets
	}))
	cases := []struct {
		name, req, code, inMessage string
		status                     int
	}{
		{"bad escape in the target", "GET /v1/stream/a%zz HTTP/1.1\r\nHost: x\r\n\r\n", "MALFORMED_REQUEST", `"/v1/stream/a%zz" does not parse (invalid URL escape "%zz")`, 400},
		{"control byte in the target", "GET /a\x7fb HTTP/1.1\r\nHost: x\r\n\r\n", "MALFORMED_REQUEST", "does not parse", 400},
		{"no Host", "GET /x HTTP/1.1\r\n\r\n", "MALFORMED_REQUEST", "missing required Host header", 400},
		{"bad header line", "GET /x HTTP/1.1\r\nHost: x\r\nno colon\r\n\r\n", "MALFORMED_REQUEST", "RFC 9112", 400},
		{"bad version", "GET /x HTTP/9\r\nHost: x\r\n\r\n", "MALFORMED_REQUEST", "RFC 9112", 400},
		{"unknown transfer coding", "POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", "UNSUPPORTED_TRANSFER_ENCODING", "chunked", 501},
		{"headers too large", "GET /x HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 9000) + "\r\n\r\n", "HEADERS_TOO_LARGE", "limit", 431},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := rawExchange(t, addr, c.req)[0]
			checkJSONError(t, resp, c.status, c.code, c.inMessage)
		})
	}
	t.Run("handler response untouched", func(t *testing.T) {
		resp := rawExchange(t, addr, "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n")[0]
		if ct := resp.Header.Get("Content-Type"); ct != "text/plain; charset=utf-8" {
			t.Fatalf("a handler's text response was rewritten: Content-Type %q", ct)
		}
	})
}

// On a kept-alive connection the refused request is the one named, not the one before.
func TestNetHTTPRefusalAfterKeepAlive(t *testing.T) {
	addr := serveWrapped(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}))
	rs := rawExchange(t, addr, "GET /first HTTP/1.1\r\nHost: x\r\n\r\n", "PUT /second%g1 HTTP/1.1\r\nHost: x\r\n\r\n")
	if rs[0].StatusCode != 200 {
		t.Fatalf("first: %d", rs[0].StatusCode)
	}
	checkJSONError(t, rs[1], 400, "MALFORMED_REQUEST", `"/second%g1"`)
}

func checkJSONError(t *testing.T, resp *http.Response, status int, code, inMessage string) {
	t.Helper()
	if resp.StatusCode != status {
		t.Fatalf("status %d, want %d", resp.StatusCode, status)
	}
	for h, want := range map[string]string{"Content-Type": "application/json", "X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"} {
		if got := resp.Header.Get(h); got != want {
			t.Errorf("%s %q, want %q", h, got, want)
		}
	}
	var body errorBody
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &body); err != nil {
		t.Fatalf("body %q: %v", b, err)
	}
	if body.Error.Code != code || !strings.Contains(body.Error.Message, inMessage) {
		t.Fatalf("error %+v, want code %s and a message with %q", body.Error, code, inMessage)
	}
}

// discardConn is a net.Conn that reads one request line and discards what is written.
type discardConn struct{ net.Conn }

func (discardConn) Read(p []byte) (int, error) {
	return copy(p, "GET /v1/stream/s?offset=-1 HTTP/1.1\r\nHost: x\r\n\r\n"), nil
}
func (discardConn) Write(p []byte) (int, error) { return len(p), nil }

// The wrapper's cost per request: noting the request line and checking the response head.
func BenchmarkJSONErrorConn(b *testing.B) {
	head := []byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nStream-Next-Offset: 0000000000000000_0000000000000004\r\nDate: Tue, 01 Dec 2026 21:00:00 GMT\r\nContent-Length: 4\r\n\r\ndata")
	buf := make([]byte, 4096)
	for _, wrapped := range []bool{false, true} {
		var c net.Conn = discardConn{}
		if wrapped {
			c = &errConn{Conn: c, capture: true}
		}
		b.Run(map[bool]string{false: "bare", true: "wrapped"}[wrapped], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = c.Read(buf)
				_, _ = c.Write(head)
			}
		})
	}
}
