package httpd

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/model"
)

// Over the limit, the stalls blocked longest are cut, until the held bytes fit; cut or
// released stalls are counted once.
func TestStallSetCutsTheOldest(t *testing.T) {
	ss := stallSet{limit: 100}
	var cut []int
	st := make([]*stall, 4)
	for i := range st {
		st[i] = ss.hold(40, func() { cut = append(cut, i) })
	}
	// 4 x 40 = 160 > 100: holding the third cut #0, the fourth cut #1.
	if fmt.Sprint(cut) != "[0 1]" || ss.inUse() != 80 {
		t.Fatalf("cut %v, in use %d; want [0 1], 80", cut, ss.inUse())
	}
	ss.release(st[0]) // already cut: no change
	ss.release(st[2])
	if ss.inUse() != 40 || ss.cuts.Load() != 2 {
		t.Fatalf("in use %d, cuts %d; want 40, 2", ss.inUse(), ss.cuts.Load())
	}
	big := ss.hold(200, func() { cut = append(cut, 9) }) // alone over the limit: cut too
	ss.release(big)
	ss.release(st[3])
	if ss.inUse() != 0 || fmt.Sprint(cut) != "[0 1 3 9]" {
		t.Fatalf("in use %d, cut %v", ss.inUse(), cut)
	}
}

// A write blocked for less than the grace period is not cut, even over the limit; once
// older, it is cut (by the sweep, or by the next stall).
func TestStallSetSparesYoungWrites(t *testing.T) {
	ss := stallSet{limit: 100, grace: 50 * time.Millisecond}
	var cut atomic.Int32
	a := ss.hold(80, func() { cut.Add(1) })
	b := ss.hold(80, func() { cut.Add(1) })
	if cut.Load() != 0 || ss.inUse() != 160 {
		t.Fatalf("young writes cut: %d, in use %d", cut.Load(), ss.inUse())
	}
	time.Sleep(80 * time.Millisecond)
	c := ss.hold(10, func() { cut.Add(10) })
	if cut.Load() != 1 || ss.inUse() != 90 {
		t.Fatalf("after the grace: cut %d, in use %d; want the oldest cut, 90", cut.Load(), ss.inUse())
	}
	for _, s := range []*stall{a, b, c} {
		ss.release(s)
	}
}

// stalledReader sends a request on a connection with a 4 KiB receive buffer and never
// reads (issue 20's hostile catch-up reader).
func stalledReader(t *testing.T, addr, path string) net.Conn {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) {
			syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		})
	}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path)
	return c
}

// bigStream appends n bytes of text to /v1/stream/big in 64 KiB appends.
func bigStream(t *testing.T, eng *engine.Engine, n int) {
	t.Helper()
	key := model.StreamKey{Bucket: "default", Stream: "big"}
	if _, err := eng.Create(key, engine.CreateRequest{ContentType: "text/plain", MediaType: "text/plain"}); err != nil {
		t.Fatal(err)
	}
	line := []byte(strings.Repeat("x", 1023) + "\n")
	body := []byte(strings.Repeat(string(line), 64))
	for i := 0; i < n/len(body); i++ {
		if _, err := eng.Append(key, engine.AppendRequest{Body: body, MediaType: "text/plain"}); err != nil {
			t.Fatal(err)
		}
	}
}

// serverTxQueues returns the send queue (bytes) of each server-side socket of port, from
// /proc/net/tcp.
func serverTxQueues(t *testing.T, port int) []int {
	t.Helper()
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		t.Skipf("no /proc/net/tcp: %v", err)
	}
	want := fmt.Sprintf(":%04X", port)
	var out []int
	for _, l := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(l)
		if len(f) < 5 || !strings.HasSuffix(f[1], want) || f[3] == "0A" { // 0A: listening
			continue
		}
		tx, _ := strconv.ParseInt(strings.Split(f[4], ":")[0], 16, 64)
		out = append(out, int(tx))
	}
	return out
}

// Catch-up SSE readers that never read hold one bounded read each, in the live-buffer
// budget; past the budget the oldest are cut with a reset, which frees their kernel send
// queues at once; the others' queues are bounded by SSESendBuffer (issue 20 item 1-2).
func TestStalledSSEReadersAreBounded(t *testing.T) {
	const readers, sndbuf = 12, 32 << 10
	srv, h := liveServer(t, Config{LiveBufferBudget: 8 * sseReadBytes, SSESendBuffer: sndbuf})
	h.stalls.grace = 0 // the readers are known not to read
	eng := h.store.(EngineStore).Engine
	bigStream(t, eng, 4<<20)
	addr := srv.Listener.Addr().String()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	before := heapInUse()
	conns := make([]net.Conn, readers)
	for i := range conns {
		conns[i] = stalledReader(t, addr, "/v1/stream/big?offset=-1&live=sse")
		time.Sleep(20 * time.Millisecond) // an order of age for the budget
	}
	waitFor(t, func() bool { return h.stalls.cuts.Load() >= readers-8 && h.stalls.inUse() > 0 })
	time.Sleep(100 * time.Millisecond)
	if used, limit := h.stalls.inUse(), 8*int64(sseReadBytes); used > limit {
		t.Fatalf("stalled writes hold %d bytes, over the budget %d", used, limit)
	}
	if grew := heapInUse() - before; grew > 12<<20 {
		t.Fatalf("%d stalled SSE readers grew the heap by %d MiB", readers, grew>>20)
	}
	// The first readers were cut: their server sockets are reset (RST, not FIN), so the
	// client sees ECONNRESET and the server keeps no queue for them.
	conns[0].SetReadDeadline(time.Now().Add(2 * time.Second))
	_, err := io.Copy(io.Discard, bufio.NewReader(conns[0]))
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("a cut reader's connection ended with %v, want ECONNRESET", err)
	}
	qs := serverTxQueues(t, port)
	if len(qs) > readers-int(h.stalls.cuts.Load()) {
		t.Errorf("%d server sockets left for %d readers of which %d were cut: %v", len(qs), readers, h.stalls.cuts.Load(), qs)
	}
	for _, q := range qs {
		if q > 2*sndbuf+16<<10 {
			t.Errorf("a stalled socket queues %d bytes; SO_SNDBUF %d bounds it to about %d", q, sndbuf, 2*sndbuf)
		}
	}
}

// A catch-up read written through net/http to a reader that does not read counts in the
// same budget; cut, its connection is reset (http.Server.ConnContext = ConnContext).
func TestStalledCatchUpReaderIsCut(t *testing.T) {
	srv, h := liveServer(t, Config{LiveBufferBudget: 256 << 10})
	h.stalls.grace = 0
	bigStream(t, h.store.(EngineStore).Engine, 2<<20)
	c := stalledReader(t, srv.Listener.Addr().String(), "/v1/stream/big?offset=-1")
	waitFor(t, func() bool { return h.stalls.cuts.Load() == 1 && h.stalls.inUse() == 0 })
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.Copy(io.Discard, c); !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("the cut reader's connection ended with %v, want ECONNRESET", err)
	}
}

// A reservation that does not fit waits while the bytes are held by young writes, goes on
// once they are released, and gives up with ErrBusy at its deadline.
func TestStallSetReserveWaits(t *testing.T) {
	ss := stallSet{limit: 100, grace: time.Hour}
	a, err := ss.reserve(80, time.Now(), func() { t.Error("a young write was cut") })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ss.reserve(40, time.Now().Add(30*time.Millisecond), nil); !errors.Is(err, model.ErrBusy) {
		t.Fatalf("a reservation past the limit: %v, want ErrBusy after its wait", err)
	}
	go func() { time.Sleep(20 * time.Millisecond); ss.release(a) }()
	start := time.Now()
	b, err := ss.reserve(40, time.Now().Add(5*time.Second), nil)
	if err != nil || time.Since(start) < 15*time.Millisecond {
		t.Fatalf("reserve after a release: %v after %v", err, time.Since(start))
	}
	ss.resize(b, 60)
	ss.noteStep(4 * sseReserve)
	if ss.inUse() != 60 || ss.stepSize() != 4*sseReserve {
		t.Fatalf("in use %d, step %d", ss.inUse(), ss.stepSize())
	}
	ss.release(b)
}

// Waiting reservations are granted in arrival order, as bytes are released.
func TestStallSetGrantsInOrder(t *testing.T) {
	ss := stallSet{limit: 100, grace: time.Hour}
	a := ss.hold(100, func() {})
	got := make(chan int, 2)
	for i := 1; i <= 2; i++ {
		go func() {
			s, err := ss.reserve(60, time.Now().Add(5*time.Second), nil)
			if err != nil {
				t.Error(err)
				return
			}
			got <- i
			time.Sleep(30 * time.Millisecond)
			ss.release(s)
		}()
		time.Sleep(20 * time.Millisecond) // 1 waits before 2
	}
	ss.release(a)
	if first, second := <-got, <-got; first != 1 || second != 2 {
		t.Fatalf("granted %d then %d, want 1 then 2", first, second)
	}
}

// A write over the limit is cut once it is old enough even when no other write comes.
func TestStallSetSweepsAlone(t *testing.T) {
	ss := stallSet{limit: 100, grace: 30 * time.Millisecond}
	cut := make(chan struct{})
	s := ss.hold(150, func() { close(cut) })
	select {
	case <-cut:
	case <-time.After(2 * time.Second):
		t.Fatal("a lone write over the limit was not cut")
	}
	ss.release(s)
	if ss.inUse() != 0 {
		t.Fatalf("in use %d after the cut", ss.inUse())
	}
}
