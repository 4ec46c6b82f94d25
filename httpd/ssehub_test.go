package httpd

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/dsd-project/dsd/engine"
)

// liveServer runs the handler behind a real HTTP/1.1 server with dsd's listener, so SSE
// responses take the hijacked, hub-parked path.
func liveServer(t testing.TB, cfg Config) (*httptest.Server, *Handler) {
	t.Helper()
	return liveServerWith(t, cfg, engine.Options{NoSync: true, SweepInterval: time.Hour})
}

// liveServerWith is liveServer over an engine opened with opts.
func liveServerWith(t testing.TB, cfg Config, opts engine.Options) (*httptest.Server, *Handler) {
	t.Helper()
	eng, err := engine.Open(t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	eng.CreateBucket("default")
	cfg.CompatBucket = "default"
	h := New(EngineStore{Engine: eng}, cfg)
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnContext = ConnContext
	srv.Listener = JSONErrorListener(srv.Listener) // as dsd serves
	srv.Start()
	t.Cleanup(func() { h.Shutdown(); srv.Close(); eng.Close() })
	return srv, h
}

// sseLines streams an SSE response's lines into a channel until it ends.
func sseLines(t *testing.T, url string) (<-chan string, *http.Response) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan string, 1024)
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			ch <- sc.Text()
		}
	}()
	return ch, resp
}

// collect reads lines until one contains want, or the response ends, or timeout.
func collect(ch <-chan string, want string, timeout time.Duration) (string, bool) {
	var b strings.Builder
	deadline := time.After(timeout)
	for {
		select {
		case l, ok := <-ch:
			if !ok {
				return b.String(), false
			}
			b.WriteString(l + "\n")
			if strings.Contains(l, want) {
				return b.String(), true
			}
		case <-deadline:
			return b.String(), false
		}
	}
}

func post(t *testing.T, url, ct, body string, hdr ...string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", ct)
	for _, h := range hdr {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode/100 != 2 {
		t.Fatalf("POST %s: %v %v", url, resp, err)
	}
	resp.Body.Close()
}

// Many parked subscribers all receive each append once, in order, then the closing
// control event, and their responses end; half of them steer the cursor, so the hub
// serves two groups. Spec: B-5.8-05, B-5.8-06, D6, A-05.
func TestParkedSubscribersReceiveEverything(t *testing.T) {
	srv, _ := liveServer(t, Config{})
	u := srv.URL + "/v1/stream/fan"
	req, _ := http.NewRequest("PUT", u, nil)
	req.Header.Set("Content-Type", "text/plain")
	http.DefaultClient.Do(req)
	const subs = 40
	outs := make([]string, subs)
	var wg sync.WaitGroup
	for i := 0; i < subs; i++ {
		q := "?offset=now&live=sse"
		if i%2 == 1 {
			q += "&cursor=" + strings.Repeat("9", 30) // above any interval: steers
		}
		ch, resp := sseLines(t, u+q)
		if resp.Header.Get("Content-Type") != "text/event-stream" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("head: %v", resp.Header)
		}
		if _, ok := collect(ch, "upToDate", 2*time.Second); !ok {
			t.Fatal("no first control event")
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			outs[i], _ = collect(ch, "streamClosed", 5*time.Second)
		}(i)
	}
	for i := 0; i < 5; i++ {
		post(t, u, "text/plain", "m"+string(rune('0'+i)))
	}
	post(t, u, "text/plain", "last", "Stream-Closed: true")
	wg.Wait()
	for i, out := range outs {
		var data []string
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "data:m") || strings.HasPrefix(l, "data:last") {
				data = append(data, strings.TrimPrefix(l, "data:"))
			}
		}
		// Control events before the closing one carry the cursor of the subscriber's group
		// (none when the hub read everything at once, after the close).
		steered := strings.Contains(out, `"streamCursor":"1`+strings.Repeat("0", 25)) // 10^30 and up
		cursors := strings.Contains(out, `"streamCursor"`)
		if strings.Join(data, "") != "m0m1m2m3m4last" || !strings.Contains(out, `"streamClosed":true`) || (cursors && steered != (i%2 == 1)) {
			t.Fatalf("subscriber %d got:\n%s", i, out)
		}
	}
}

// A parked subscriber hears a keep-alive control event while idle, and its response
// ends at the max age. Spec: D6, B-10-08.
func TestParkedKeepAliveAndMaxAge(t *testing.T) {
	srv, _ := liveServer(t, Config{SSEKeepAlive: 200 * time.Millisecond, SSEMaxAge: 900 * time.Millisecond})
	u := srv.URL + "/v1/stream/ka"
	req, _ := http.NewRequest("PUT", u, nil)
	http.DefaultClient.Do(req)
	ch, _ := sseLines(t, u+"?offset=-1&live=sse")
	start := time.Now()
	out, _ := collect(ch, "never", 3*time.Second)
	if n := strings.Count(out, "event: control"); n < 3 {
		t.Fatalf("%d control events in %v:\n%s", n, time.Since(start), out)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("response did not end at max age: %v", el)
	}
}

// Deleting the stream ends parked responses; Shutdown ends the rest.
func TestParkedResponsesEndOnDeleteAndShutdown(t *testing.T) {
	srv, h := liveServer(t, Config{})
	for _, n := range []string{"d1", "d2"} {
		req, _ := http.NewRequest("PUT", srv.URL+"/v1/stream/"+n, nil)
		http.DefaultClient.Do(req)
	}
	ch1, _ := sseLines(t, srv.URL+"/v1/stream/d1?offset=-1&live=sse")
	ch2, _ := sseLines(t, srv.URL+"/v1/stream/d2?offset=-1&live=sse")
	collect(ch1, "upToDate", time.Second)
	collect(ch2, "upToDate", time.Second)
	req, _ := http.NewRequest("DELETE", srv.URL+"/v1/stream/d1", nil)
	http.DefaultClient.Do(req)
	start := time.Now()
	collect(ch1, "never", 3*time.Second)
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("delete did not end the parked response (%v)", el)
	}
	done := make(chan struct{})
	go func() { collect(ch2, "never", 5*time.Second); close(done) }()
	h.Shutdown()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		t.Fatal("shutdown did not end the parked response")
	}
}

// A parked subscriber that stops reading delays no other subscriber: the hub hands it to
// a goroutine of its own as soon as its socket is full, and once it reads again it gets
// everything, in order, on the same response. Spec: B-5.8-04, D6 (issue 9: fan-out).
func TestStalledSubscriberDelaysNoOther(t *testing.T) {
	srv, _ := liveServer(t, Config{})
	u := srv.URL + "/v1/stream/stall"
	req, _ := http.NewRequest("PUT", u, nil)
	req.Header.Set("Content-Type", "text/plain")
	http.DefaultClient.Do(req)

	stalled, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	fmt.Fprintf(stalled, "GET /v1/stream/stall?offset=now&live=sse HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.Get(u + "?offset=now&live=sse")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	healthy := make(chan string, 1024)
	go func() { // data lines merge several appends: up to ~1 MiB each
		defer close(healthy)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 4<<20), 4<<20)
		for sc.Scan() {
			if l := sc.Text(); strings.HasPrefix(l, "data:{") {
				healthy <- l
			}
		}
	}()
	if _, ok := collect(healthy, "upToDate", 2*time.Second); !ok {
		t.Fatal("healthy subscriber: no first control event")
	}
	time.Sleep(100 * time.Millisecond) // both parked

	var want strings.Builder
	for i := 0; i < 400; i++ { // 25 MiB: more than the socket buffers hold
		msg := strings.Repeat(string(rune('a'+i%26)), 64<<10)
		want.WriteString(msg)
		post(t, u, "text/plain", msg)
	}
	last := time.Now()
	if _, ok := collect(healthy, "0000000000000000_0000000026214400", 5*time.Second); !ok {
		t.Fatalf("healthy subscriber lacks the last event %v after the last append", time.Since(last))
	}

	// The stalled reader now reads: one response, no cut, every byte in order.
	stalled.SetReadDeadline(time.Now().Add(20 * time.Second))
	br := bufio.NewReader(stalled)
	sresp, err := http.ReadResponse(br, nil)
	if err != nil || sresp.StatusCode != 200 {
		t.Fatalf("stalled subscriber's response: %v %v", sresp, err)
	}
	var got strings.Builder
	sc := bufio.NewScanner(sresp.Body)
	sc.Buffer(make([]byte, 4<<20), 4<<20)
	for got.Len() < want.Len() && sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data:"); ok && !strings.HasPrefix(d, "{") {
			got.WriteString(d)
		}
	}
	if got.String() != want.String() {
		t.Fatalf("stalled subscriber got %d bytes (err %v), want the %d appended, in order", got.Len(), sc.Err(), want.Len())
	}
}

// An SSE request followed by more bytes (a pipelined request, a stray CRLF) is still
// answered; the response closes the connection. Spec: B-5.8-01, RFC 9112 §9.3.2.
func TestSSEWithPipelinedBytesIsAnswered(t *testing.T) {
	srv, _ := liveServer(t, Config{})
	req, _ := http.NewRequest("PUT", srv.URL+"/v1/stream/pipe", nil)
	http.DefaultClient.Do(req)
	for _, extra := range []string{"\r\n", "GET /v1/stream/pipe HTTP/1.1\r\nHost: x\r\n\r\n"} {
		c, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "GET /v1/stream/pipe?offset=-1&live=sse HTTP/1.1\r\nHost: x\r\n\r\n%s", extra)
		c.SetReadDeadline(time.Now().Add(3 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("SSE followed by %q: %v %v", extra, resp, err)
		}
		c.Close()
	}
}

// Shutdown returns once every parked response has its final chunk.
func TestShutdownEndsParkedResponsesCleanly(t *testing.T) {
	srv, h := liveServer(t, Config{})
	req, _ := http.NewRequest("PUT", srv.URL+"/v1/stream/shut", nil)
	http.DefaultClient.Do(req)
	const subs = 100
	errs := make(chan error, subs)
	for i := 0; i < subs; i++ {
		resp, err := http.Get(srv.URL + "/v1/stream/shut?offset=-1&live=sse")
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			_, err := io.ReadAll(resp.Body)
			errs <- err
		}()
	}
	time.Sleep(200 * time.Millisecond) // parked
	h.Shutdown()
	h.hubs.mu.Lock()
	left := len(h.hubs.hubs)
	h.hubs.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d hubs still running after Shutdown returned", left)
	}
	for i := 0; i < subs; i++ {
		select {
		case err := <-errs:
			if err != nil {
				t.Fatalf("a parked response ended without its final chunk: %v", err)
			}
		case <-time.After(3 * time.Second):
			t.Fatal("a parked response did not end")
		}
	}
}

// A parked subscriber is one allocation of at most 128 bytes (issue 19 target 4: 10,000
// idle subscribers in <= 1 KiB of RSS each); a field more moves it to the next size class.
func TestSSESubSize(t *testing.T) {
	if n := unsafe.Sizeof(sseSub{}); n > 128 {
		t.Fatalf("sseSub is %d bytes, want <= 128", n)
	}
}
