package httpd

import (
	"bufio"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
)

// BenchmarkParkedSubscriberHeap measures the live heap one idle SSE subscriber parked in
// its hub costs the server (issue 19 target 4: <= 1 KiB of RSS each): the heap growth
// with 500 parked subscribers, less what their 500 client connections in this process
// cost (measured the same way against a listener that closes its end at once).
func BenchmarkParkedSubscriberHeap(b *testing.B) {
	const subs = 500
	srv, _ := liveServer(b, Config{})
	u := srv.URL + "/v1/stream/idle"
	req, _ := http.NewRequest("PUT", u, nil)
	req.Header.Set("Content-Type", "text/plain")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode >= 300 {
		b.Fatalf("create: %v %v", resp, err)
	}
	addr := strings.TrimPrefix(srv.URL, "http://")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	var perSub, perClient float64
	for i := 0; i < b.N; i++ {
		before := liveHeap()
		conns := dialN(b, ln.Addr().String(), subs, "")
		perClient += float64(liveHeap()-before) / subs
		closeAll(conns)
		before = liveHeap()
		conns = dialN(b, addr, subs, "GET /v1/stream/idle?offset=now&live=sse HTTP/1.1\r\nHost: x\r\n\r\n")
		perSub += float64(liveHeap()-before) / subs
		closeAll(conns)
	}
	b.ReportMetric(perSub/float64(b.N)-perClient/float64(b.N), "server-heap-B/sub")
	b.ReportMetric(perClient/float64(b.N), "client-heap-B/conn")
}

// dialN opens n connections to addr; with a request, each sends it and reads until its
// first control event.
func dialN(b *testing.B, addr string, n int, request string) []net.Conn {
	conns := make([]net.Conn, n)
	for i := range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			b.Fatal(err)
		}
		conns[i] = c
		if request == "" {
			continue
		}
		if _, err := c.Write([]byte(request)); err != nil {
			b.Fatal(err)
		}
		br := bufio.NewReaderSize(c, 256)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				b.Fatal(err)
			}
			if strings.Contains(line, "upToDate") {
				break
			}
		}
	}
	return conns
}

func closeAll(conns []net.Conn) {
	for _, c := range conns {
		c.Close()
	}
}

// liveHeap returns the bytes of live heap objects after two collections.
func liveHeap() int64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
