package httpd

import (
	"bufio"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/dsd-project/dsd/model"
)

// sseOverHTTP10 opens an SSE response with an HTTP/1.0 request, which cannot be hijacked:
// the per-connection path serves it (sse's own loop, not the hub).
func sseOverHTTP10(t *testing.T, rawURL string) <-chan string {
	t.Helper()
	u, _ := url.Parse(rawURL)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := conn.Write([]byte("GET " + u.RequestURI() + " HTTP/1.0\r\nHost: " + u.Host + "\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	ch := make(chan string, 1024)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(conn)
		for sc.Scan() {
			ch <- sc.Text()
		}
	}()
	return ch
}

// sseOpeners are the two ways an SSE response is served: hijacked and parked in the hub
// (HTTP/1.1), or by its own loop (HTTP/1.0 here, HTTP/2 in production).
var sseOpeners = map[string]func(t *testing.T, url string) <-chan string{
	"hub":  func(t *testing.T, url string) <-chan string { ch, _ := sseLines(t, url); return ch },
	"loop": sseOverHTTP10,
}

func put(t *testing.T, u, ct, body string) {
	t.Helper()
	req, _ := http.NewRequest("PUT", u, strings.NewReader(body))
	req.Header.Set("Content-Type", ct)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("PUT %s: %v %v", u, resp, err)
	}
	resp.Body.Close()
}

func tok(n int) string { return model.Offset(n).String() }

// On a text stream no data event ends inside a UTF-8 sequence: the trailing C3 of "caf"+C3
// waits, the control event stops before it, and it goes out with the A9 that completes
// it; a client that resumes from that control event's offset is served. Spec: D9.
func TestSSEHoldsBackIncompleteUTF8(t *testing.T) {
	srv, _ := liveServer(t, Config{})
	for name, open := range sseOpeners {
		t.Run(name, func(t *testing.T) {
			u := srv.URL + "/v1/stream/utf8-" + name
			put(t, u, "text/plain", "caf\xc3")
			ch := open(t, u+"?offset=-1&live=sse")
			out, ok := collect(ch, "upToDate", 3*time.Second)
			if !ok || !strings.Contains(out, "data:caf\n") || strings.Contains(out, "\xc3") || !strings.Contains(out, `"streamNextOffset":"`+tok(3)+`"`) {
				t.Fatalf("first events:\n%q", out)
			}
			post(t, u, "text/plain", "\xa9!")
			if out, ok := collect(ch, tok(6), 3*time.Second); !ok || !strings.Contains(out, "data:é!\n") {
				t.Fatalf("after the completing append:\n%q", out)
			}
			again := open(t, u+"?offset="+tok(3)+"&live=sse")
			if out, ok := collect(again, tok(6), 3*time.Second); !ok || !strings.Contains(out, "data:é!\n") {
				t.Fatalf("resumed at the held offset:\n%q", out)
			}
			post(t, u, "text/plain", "\xe2\x82")
			if out, _ := collect(ch, "event:", 300*time.Millisecond); strings.Contains(out, "event:") {
				t.Fatalf("bytes that complete nothing yet sent events:\n%q", out)
			}
			post(t, u, "text/plain", "\xff", "Stream-Closed: true")
			if out, ok := collect(ch, "streamClosed", 3*time.Second); !ok || !strings.Contains(out, "data:\xe2\x82\xff\n") || !strings.Contains(out, tok(9)) {
				t.Fatalf("bytes that can never complete go out as they are:\n%q", out)
			}
		})
	}
}

// Held bytes of a stream that is then closed without another append go out as they are,
// before the closing control event. Spec: D9, A-19.
func TestSSEHeldBytesGoOutAtClose(t *testing.T) {
	srv, _ := liveServer(t, Config{})
	for name, open := range sseOpeners {
		t.Run(name, func(t *testing.T) {
			u := srv.URL + "/v1/stream/held-close-" + name
			put(t, u, "text/plain", "caf\xc3")
			ch := open(t, u+"?offset=-1&live=sse")
			if out, ok := collect(ch, "upToDate", 3*time.Second); !ok || !strings.Contains(out, tok(3)) {
				t.Fatalf("first events:\n%q", out)
			}
			post(t, u, "text/plain", "", "Stream-Closed: true")
			if out, ok := collect(ch, "streamClosed", 3*time.Second); !ok || !strings.Contains(out, "data:\xc3\n") || !strings.Contains(out, tok(4)) {
				t.Fatalf("at close:\n%q", out)
			}
		})
	}
}

// On a binary stream every message (append unit, append-batch frame) is its own base64
// data event, each followed by its control event. Spec: D9, A-18.
func TestSSEBinaryOneEventPerMessage(t *testing.T) {
	srv, _ := liveServer(t, Config{})
	for name, open := range sseOpeners {
		t.Run(name, func(t *testing.T) {
			u := srv.URL + "/default/bin-" + name
			put(t, u, "application/octet-stream", "ab")
			post(t, u, "application/octet-stream", "cd")
			post(t, u+"/append-batch", "application/octet-stream", frames("e", "fg"))
			ch := open(t, u+"?offset=-1&live=sse")
			out, ok := collect(ch, "upToDate", 3*time.Second)
			want := []string{"data:YWI=", tok(2), "data:Y2Q=", tok(4), "data:ZQ==", tok(5), "data:Zmc=", tok(7)}
			rest := out
			for _, w := range want {
				i := strings.Index(rest, w)
				if !ok || i < 0 {
					t.Fatalf("want %q in order in:\n%s", w, out)
				}
				rest = rest[i+len(w):]
			}
			if strings.Count(out, "event: data") != 4 || strings.Count(out, "event: control") != 4 {
				t.Fatalf("want 4 data events each with its control event:\n%s", out)
			}
			post(t, u+"/append-batch", "application/octet-stream", frames("h", "i"))
			if out, ok := collect(ch, tok(9), 3*time.Second); !ok || !strings.Contains(out, "data:aA==") || !strings.Contains(out, tok(8)) {
				t.Fatalf("live frames:\n%s", out)
			}
		})
	}
}

// A read chunk that ends inside a code point (the SSE read size falls at a message
// boundary inside it) holds its incomplete tail back too: the next chunk starts with it.
// Spec: D9, A-16.
func TestSSEChunkLimitInsideACodePoint(t *testing.T) {
	srv, _ := liveServer(t, Config{})
	u := srv.URL + "/v1/stream/chunks"
	lines := strings.Repeat("x\n", sseReadBytes/2-1) // short data: lines, sseReadBytes-2 bytes
	put(t, u, "text/plain", lines+"\xc3")
	post(t, u, "text/plain", "\xa9bbbb")
	for name, open := range sseOpeners {
		ch := open(t, u+"?offset=-1&live=sse")
		out, ok := collect(ch, "upToDate", 3*time.Second)
		want := "data:\n\nevent: control\ndata:{\"streamNextOffset\":\"" + tok(len(lines)) + "\""
		if !ok || !strings.Contains(out, want) || !strings.Contains(out, "data:ébbbb\n") || !strings.Contains(out, tok(len(lines)+6)) {
			t.Fatalf("%s: chunks:\n%.300s ... %s", name, out, out[max(0, len(out)-300):])
		}
	}
}
