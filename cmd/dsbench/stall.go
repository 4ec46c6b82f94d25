package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// stallDial connects to the server of base with a receive buffer of rcvbuf bytes (set
// before the handshake, so the advertised window stays small).
func stallDial(base string, rcvbuf int) (net.Conn, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" {
		return nil, errors.New("stall workloads need an http:// base (raw connections)")
	}
	d := net.Dialer{Timeout: 10 * time.Second, Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) {
			if rcvbuf > 0 {
				serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, rcvbuf)
			}
		})
		return errors.Join(err, serr)
	}}
	return d.Dial("tcp", u.Host)
}

// serverPort is the port of base's host (80 when absent).
func serverPort(base string) int {
	u, err := url.Parse(base)
	if err != nil {
		return 0
	}
	if p, err := strconv.Atoi(u.Port()); err == nil {
		return p
	}
	return 80
}

// sockQueues sums the send and receive queues (bytes) of the server-side TCP sockets of
// port (local port = port, not listening), from /proc/net/tcp and tcp6: what the kernel
// holds for the server's connections. n is the number of such sockets.
func sockQueues(port int) (tx, rx int64, n int) {
	want := fmt.Sprintf(":%04X", port)
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n")[1:] {
			fs := strings.Fields(l)
			if len(fs) < 5 || !strings.HasSuffix(fs[1], want) || fs[3] == "0A" {
				continue
			}
			q := strings.Split(fs[4], ":")
			t, _ := strconv.ParseInt(q[0], 16, 64)
			r, _ := strconv.ParseInt(q[1], 16, 64)
			tx, rx, n = tx+t, rx+r, n+1
		}
	}
	return tx, rx, n
}

// tcpMemKiB is the kernel's TCP buffer memory, all sockets (/proc/net/sockstat "mem",
// pages of 4 KiB).
func tcpMemKiB() int64 {
	b, err := os.ReadFile("/proc/net/sockstat")
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(l, "TCP:") {
			continue
		}
		f := strings.Fields(l)
		for i := 1; i+1 < len(f); i += 2 {
			if f[i] == "mem" {
				n, _ := strconv.ParseInt(f[i+1], 10, 64)
				return n * 4
			}
		}
	}
	return -1
}

// peakSampler samples the server's VmRSS and its sockets' queues until stopped, keeping
// the peaks.
type peakSampler struct {
	pid, port                 int
	rss, tx, rx, tcpMem       atomic.Int64 // peaks: KiB, bytes, bytes, KiB
	rssBaseKiB, tcpMemBaseKiB int64
	stop                      chan struct{}
	done                      sync.WaitGroup
}

func startPeakSampler(pid, port int) (*peakSampler, error) {
	base, err := readVmRSS(pid)
	if err != nil {
		return nil, err
	}
	p := &peakSampler{pid: pid, port: port, stop: make(chan struct{}), rssBaseKiB: base, tcpMemBaseKiB: tcpMemKiB()}
	p.sample()
	p.done.Add(1)
	go func() {
		defer p.done.Done()
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-tick.C:
				p.sample()
			}
		}
	}()
	return p, nil
}

func (p *peakSampler) sample() {
	if r, err := readVmRSS(p.pid); err == nil {
		p.rss.Store(max(p.rss.Load(), r))
	}
	tx, rx, _ := sockQueues(p.port)
	p.tx.Store(max(p.tx.Load(), tx))
	p.rx.Store(max(p.rx.Load(), rx))
	p.tcpMem.Store(max(p.tcpMem.Load(), tcpMemKiB()))
}

func (p *peakSampler) finish() {
	close(p.stop)
	p.done.Wait()
	p.sample()
}

// report adds the peaks to r and prints them.
func (p *peakSampler) report(r *Result) {
	growth := p.rss.Load() - p.rssBaseKiB
	fmt.Printf("server VmRSS %d KiB, peak %d KiB (growth %+d KiB); server sockets' send queues peak %d KiB, receive queues %d KiB; kernel TCP memory (all sockets) %d -> peak %d KiB\n",
		p.rssBaseKiB, p.rss.Load(), growth, p.tx.Load()>>10, p.rx.Load()>>10, p.tcpMemBaseKiB, p.tcpMem.Load())
	r.Set("rss_before_kib", p.rssBaseKiB)
	r.Set("rss_peak_kib", p.rss.Load())
	r.Set("rss_growth_kib", growth)
	r.Set("sock_tx_peak_kib", p.tx.Load()>>10)
	r.Set("tcp_mem_before_kib", p.tcpMemBaseKiB)
	r.Set("tcp_mem_peak_kib", p.tcpMem.Load())
}

// probeCut reports whether the server reset c: a read that fails with ECONNRESET, or
// reports EOF (closed), within a short wait. Data still queued is drained first.
func probeCut(c net.Conn) (reset, closed bool) {
	buf := make([]byte, 64<<10)
	deadline := time.Now().Add(300 * time.Millisecond)
	for {
		c.SetReadDeadline(deadline)
		_, err := c.Read(buf)
		switch {
		case err == nil:
			continue
		case errors.Is(err, syscall.ECONNRESET):
			return true, false
		case errors.Is(err, os.ErrDeadlineExceeded):
			return false, false
		default:
			return false, true
		}
	}
}

// healthyLoop runs clients that read a small stream by catch-up in a closed loop until
// ctx ends, recording each request's latency.
func healthyLoop(ctx context.Context, t *Target, streamURL string, clients int) (*Histogram, Statuses) {
	var mu sync.Mutex
	all, statuses := &Histogram{}, Statuses{}
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h, st := &Histogram{}, Statuses{}
			for ctx.Err() == nil {
				start := time.Now()
				code, _, err := t.do(ctx, "GET", streamURL+"?offset=-1", nil, nil)
				if ctx.Err() != nil {
					break
				}
				h.Record(time.Since(start))
				st.Inc(code, err)
				time.Sleep(10 * time.Millisecond)
			}
			mu.Lock()
			all.Merge(h)
			statuses.Add(st)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return all, statuses
}

// dialMany opens n connections with dial, at most parallel at a time, and sends each the
// bytes of req(i) (a request head and maybe part of a body). It returns the connections
// that were opened.
func dialMany(n, parallel int, dial func() (net.Conn, error), req func(i int, c net.Conn) error) ([]net.Conn, int) {
	conns := make([]net.Conn, n)
	var failed atomic.Int64
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			c, err := dial()
			if err != nil {
				failed.Add(1)
				return
			}
			c.SetWriteDeadline(time.Now().Add(20 * time.Second))
			_ = req(i, c) // a server that refuses the rest of a body is the point
			conns[i] = c
		}()
	}
	wg.Wait()
	return conns, int(failed.Load())
}
