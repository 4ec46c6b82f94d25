package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"time"
)

func runStallSSE(args []string) error {
	fs := flag.NewFlagSet("stall-sse", flag.ContinueOnError)
	common := registerCommon(fs)
	stalled := fs.Int("stalled", 1000, "catch-up SSE readers (offset=-1) that never read")
	healthy := fs.Int("healthy", 16, "healthy clients reading a small stream by catch-up meanwhile (latency measured)")
	size := byteSize(64 << 20)
	fs.Var(&size, "stream-size", "bytes of the text stream the stalled readers catch up on")
	rcvbuf := fs.Int("rcvbuf", 4096, "receive buffer (SO_RCVBUF) of each stalled connection")
	hold := fs.Duration("hold", 20*time.Second, "how long the stalled readers stay connected after the last one is")
	parallel := fs.Int("connect-parallel", 100, "connections opened at a time")
	pid := fs.Int("server-pid", envInt("DS_SERVER_PID"), "server process whose VmRSS is sampled (default $DS_SERVER_PID)")
	fs.Usage = flagUsage(fs, "stall-sse", "Issue 20, target 1: --stalled raw connections with a tiny receive buffer ask for a\n"+
		"catch-up SSE read of a large stream and never read, while --healthy clients keep reading a\n"+
		"small stream. Reports the server's peak RSS growth, the peak send queues of its sockets\n"+
		"(/proc/net/tcp) and the kernel's TCP memory, the healthy readers' latency, and how many\n"+
		"stalled readers the server reset.")
	cm, err := common(args)
	if err != nil {
		return err
	}
	if *pid <= 0 || *stalled < 1 || size < 1 {
		return errors.New("--server-pid (or $DS_SERVER_PID), --stalled >= 1 and --stream-size >= 1 are required")
	}
	raiseNoFile(uint64(*stalled + *healthy + 1024))
	t := newTarget(cm, *healthy+8)
	ctx := context.Background()
	if err := t.Prepare(ctx); err != nil {
		return unsupportedOr("stall-sse", cm.Tags, err)
	}
	big, small := t.StreamName(0), t.StreamName(1)
	if err := fillText(ctx, t, big, int64(size)); err != nil {
		return err
	}
	if err := fillText(ctx, t, small, 4<<10); err != nil {
		return err
	}
	time.Sleep(time.Second)
	ps, err := startPeakSampler(*pid, serverPort(cm.Base))
	if err != nil {
		return err
	}
	fmt.Printf("stall-sse: %d stalled catch-up SSE readers (SO_RCVBUF %d) on %d bytes, %d healthy readers, server pid %d\n",
		*stalled, *rcvbuf, int64(size), *healthy, *pid)
	hctx, stopHealthy := context.WithCancel(ctx)
	type healthOut struct {
		h  *Histogram
		st Statuses
	}
	hc := make(chan healthOut, 1)
	go func() { h, st := healthyLoop(hctx, t, t.StreamURL(small), *healthy); hc <- healthOut{h, st} }()
	path := t.StreamURL(big)[len(cm.Base):] + "?offset=-1&live=sse"
	start := time.Now()
	conns, failed := dialMany(*stalled, *parallel, func() (net.Conn, error) { return stallDial(cm.Base, *rcvbuf) },
		func(_ int, c net.Conn) error {
			_, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: bench\r\n\r\n", path)
			return err
		})
	fmt.Printf("connected %d/%d in %v; holding %v\n", *stalled-failed, *stalled, time.Since(start).Round(time.Millisecond), *hold)
	time.Sleep(*hold)
	ps.finish()
	stopHealthy()
	ho := <-hc
	reset, closed := 0, 0
	for _, c := range conns {
		if c == nil {
			continue
		}
		r, cl := probeCut(c)
		if r {
			reset++
		} else if cl {
			closed++
		}
		c.Close()
	}
	r := NewResult("stall-sse", cm.Tags)
	r.Set("stalled", *stalled)
	r.Set("connect_failed", failed)
	r.Set("stream_bytes", int64(size))
	ps.report(r)
	fmt.Printf("stalled readers: %d reset by the server, %d closed, %d still open; healthy reads: %d, p50 %.1f ms, p99 %.1f ms, max %.1f ms, %s\n",
		reset, closed, *stalled-failed-reset-closed, ho.h.Count(), ms(ho.h.Quantile(0.5)), ms(ho.h.Quantile(0.99)), ms(ho.h.Max()), ho.st)
	r.Set("stalled_reset", reset)
	r.Set("stalled_closed", closed)
	r.Set("healthy_reads", ho.h.Count())
	r.Set("healthy_p50_ms", ho.h.Quantile(0.5))
	r.Set("healthy_p99_ms", ho.h.Quantile(0.99))
	r.SetStatuses("healthy", ho.st)
	fmt.Println(r)
	return nil
}

// fillText creates a text/plain stream holding about n bytes (appends of up to 1 MiB of
// 1 KiB lines).
func fillText(ctx context.Context, t *Target, name string, n int64) error {
	if _, err := t.CreateStream(ctx, name, "text/plain"); err != nil {
		return err
	}
	line := append(bytes.Repeat([]byte("x"), 1023), '\n')
	chunk := bytes.Repeat(line, 1024)
	for left := n; left > 0; left -= int64(len(chunk)) {
		body := chunk[:min(int64(len(chunk)), left)]
		code, b, err := t.do(ctx, "POST", t.StreamURL(name), map[string]string{"Content-Type": "text/plain"}, body)
		if err != nil || code/100 != 2 {
			return fmt.Errorf("fill %s: %d %s %v", name, code, trimBody(b), err)
		}
	}
	return nil
}
