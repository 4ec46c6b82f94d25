package httpd

import (
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// BenchmarkLoopbackWriteFloor is the floor of an SSE delivery on this machine (issue 19): one
// write(2) of a 100-byte event, framed as the hub frames it (chunk header, "data:" line,
// control event), to a loopback TCP socket that a goroutine drains. conns=1000 writes the
// sockets in turn, as a fan-out to 1,000 subscribers does. Compare dsbench fanout's
// server_cpu_us_per_delivery with write-cpu-ns/op: the CPU of the writing thread alone
// (RUSAGE_THREAD), without the readers' wake-ups that ns/op also pays on 2 cores.
func BenchmarkLoopbackWriteFloor(b *testing.B) {
	event := "event: data\ndata:" + strings.Repeat("x", 100) + "\n\n" +
		"event: control\ndata:{\"streamNextOffset\":\"0000000000000001_0000000000000064\"}\n\n"
	frame := []byte(fmt.Sprintf("%x\r\n%s\r\n", len(event), event))
	for _, conns := range []int{1, 1000} {
		b.Run(fmt.Sprintf("conns=%d", conns), func(b *testing.B) {
			ws := loopbackPairs(b, conns)
			b.SetBytes(int64(len(frame)))
			b.ReportAllocs()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			cpu0 := threadCPU(b)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := ws[i%conns].Write(frame); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(threadCPU(b)-cpu0)/float64(b.N), "write-cpu-ns/op")
		})
	}
}

// threadCPU returns the user+system CPU time of the calling OS thread in nanoseconds.
func threadCPU(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// rusageThread is Linux's RUSAGE_THREAD (not in package syscall).
const rusageThread = 1

// loopbackPairs returns n client ends of loopback TCP connections whose server ends are
// drained by one goroutine each; all are closed when b ends.
func loopbackPairs(b *testing.B, n int) []net.Conn {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	ws := make([]net.Conn, 0, n)
	for range n {
		w, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		r, err := ln.Accept()
		if err != nil {
			b.Fatal(err)
		}
		go func() { _, _ = io.Copy(io.Discard, r) }()
		b.Cleanup(func() { w.Close(); r.Close() })
		ws = append(ws, w)
	}
	return ws
}
