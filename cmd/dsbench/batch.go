package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// batchConfig configures the append-batch workload.
type batchConfig struct {
	Streams    int  // number of streams written
	Conns      int  // closed-loop writers
	Frames     int  // frames per append-batch request
	FrameSize  int  // payload bytes per frame
	Baseline   bool // also run single-message POSTs of FrameSize first
	ServerPID  int  // server process whose CPU per record is read from /proc (0 = not reported)
	loopWindow      // of each phase
}

func runBatch(args []string) error {
	fs := flag.NewFlagSet("batch", flag.ContinueOnError)
	common := registerCommon(fs)
	var c batchConfig
	fs.IntVar(&c.Streams, "streams", 100, "number of streams")
	fs.IntVar(&c.Conns, "conns", 50, "closed-loop writers (one keep-alive connection each)")
	fs.IntVar(&c.Frames, "frames", 100, "frames per append-batch request (servers may cap at 512)")
	fs.IntVar(&c.FrameSize, "frame-size", 100, "payload bytes per frame")
	registerWindow(fs, &c.loopWindow, 10*time.Second, "each phase")
	registerServerPID(fs, &c.ServerPID, "CPU time per batched record is reported, from /proc/PID/stat")
	fs.BoolVar(&c.Baseline, "baseline", true, "first run single-message POSTs of --frame-size bytes on the same streams and report the records/s ratio")
	fs.Usage = flagUsage(fs, "batch", "Append-batch (POST {stream}/append-batch, uint32-BE length-prefixed frames; extension §4):\n"+
		"reports requests/s and records/s, and with --baseline the ratio to single POSTs in the same run.\n"+
		"A server without append-batch (404/405/501) is reported as unsupported.")
	cm, err := common(args)
	if err != nil {
		return err
	}
	if c.Streams < 1 || c.Conns < 1 || c.Frames < 1 || c.FrameSize < 1 {
		return fmt.Errorf("--streams, --conns, --frames and --frame-size must be >= 1")
	}
	t := newTarget(cm, c.Conns)
	ctx := context.Background()
	if err := t.Prepare(ctx); err != nil {
		return unsupportedOr("batch", cm.Tags, err)
	}
	const ctype = "text/plain"
	if err := t.CreateStreams(ctx, c.Streams, min(c.Conns, 32), ctype); err != nil {
		return err
	}
	payload := appendPayload(c.FrameSize, false)
	frames := make([][]byte, c.Frames)
	for i := range frames {
		frames[i] = payload
	}
	body := encodeBatch(frames)
	st, resp, err := t.do(ctx, http.MethodPost, t.ExtURL(t.StreamName(0))+"/append-batch",
		map[string]string{"Content-Type": ctype}, encodeBatch(frames[:1]))
	switch {
	case err != nil:
		return fmt.Errorf("append-batch probe: %w", err)
	case unsupportedStatus(st):
		return reportUnsupported("batch", cm.Tags, fmt.Errorf("POST {stream}/append-batch: HTTP %d", st))
	case st != 200:
		return fmt.Errorf("append-batch probe: HTTP %d %s", st, trimBody(resp))
	}
	if _, err := parseAcks(resp, 1); err != nil {
		return err
	}

	r := NewResult("batch", cm.Tags)
	r.Set("streams", c.Streams)
	r.Set("conns", c.Conns)
	r.Set("frames", c.Frames)
	r.Set("frame_size", c.FrameSize)
	var single *loopStats
	if c.Baseline {
		fmt.Printf("batch baseline: single POSTs of %dB, streams=%d conns=%d warmup=%v duration=%v\n",
			c.FrameSize, c.Streams, c.Conns, c.Warmup, c.Duration)
		single = appendLoop(ctx, t, appendConfig{Streams: c.Streams, Conns: c.Conns, Size: c.FrameSize,
			loopWindow: c.loopWindow}, ctype)
		fmt.Printf("single: %d records in %.2fs = %.1f records/s; statuses %s\n",
			single.Records, single.Elapsed.Seconds(), single.perSecond(single.Records), single.Statuses)
		printLatency(stdout, "single latency", &single.Latency)
	}
	fmt.Printf("batch: %d frames x %dB per request, streams=%d conns=%d warmup=%v duration=%v\n",
		c.Frames, c.FrameSize, c.Streams, c.Conns, c.Warmup, c.Duration)
	srv0, srvErr0 := serverCPU(c.ServerPID)
	frameStatuses, bst := batchLoop(ctx, t, c, ctype, body)
	srv1, srvErr1 := serverCPU(c.ServerPID)
	fmt.Printf("batch: %d requests = %.1f/s, %d records = %.1f records/s, %.2f MB/s; request statuses %s; frame statuses %s\n",
		bst.Ops, bst.perSecond(bst.Ops), bst.Records, bst.perSecond(bst.Records), bst.perSecond(bst.Bytes)/1e6,
		bst.Statuses, frameStatuses)
	printLatency(stdout, "batch latency", &bst.Latency)
	r.Set("dur_s", bst.Elapsed.Seconds())
	r.Set("reqs", bst.Ops)
	r.Set("rps", bst.perSecond(bst.Ops))
	r.Set("records", bst.Records)
	r.Set("records_per_s", bst.perSecond(bst.Records))
	r.Set("mb_per_s", bst.perSecond(bst.Bytes)/1e6)
	r.SetLatency("", &bst.Latency)
	r.SetStatuses("", bst.Statuses)
	r.SetStatuses("frame_", frameStatuses)
	if c.ServerPID > 0 && srvErr0 == nil && srvErr1 == nil {
		// Over the whole batch loop, warm-up included, per record sent.
		perRecord := cpuPerOp(srv1-srv0, bst.AllOps*int64(c.Frames))
		r.Set("server_cpu_us_per_record", perRecord)
		fmt.Printf("server CPU: %.2f us/record\n", perRecord)
	}
	if single != nil {
		sr := single.perSecond(single.Records)
		r.Set("single_records_per_s", sr)
		if single.Latency.Count() > 0 {
			r.Set("single_p99_ms", single.Latency.Quantile(0.99))
		}
		r.SetStatuses("single_", single.Statuses)
		if sr > 0 {
			r.Set("batch_vs_single", bst.perSecond(bst.Records)/sr)
			fmt.Printf("records/s: batch / single = %.2f\n", bst.perSecond(bst.Records)/sr)
		}
	}
	fmt.Println(r)
	return nil
}

// batchLoop runs the closed loop of append-batch requests; it returns the per-frame statuses
// (from the acks) and the per-request stats, whose Records count 2xx frames.
func batchLoop(ctx context.Context, t *Target, c batchConfig, ctype string, body []byte) (Statuses, *loopStats) {
	urls := make([]string, c.Streams)
	for i := range urls {
		urls[i] = t.ExtURL(t.StreamName(i)) + "/append-batch"
	}
	var mu sync.Mutex
	frameStatuses := Statuses{}
	clients := t.writerClients(c.Conns)
	st := closedLoop(ctx, c.Conns, c.Warmup, c.Duration, func(ctx context.Context, w, iter int, measured bool) opResult {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, urls[(w+iter)%c.Streams], bytes.NewReader(body))
		if err != nil {
			return opResult{err: err}
		}
		req.Header.Set("Content-Type", ctype)
		resp, err := clients[w].Do(req)
		if err != nil {
			return opResult{err: err}
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		r := opResult{status: resp.StatusCode, err: err}
		if err != nil || resp.StatusCode != 200 || !measured {
			return r
		}
		acks, err := parseAcks(b, c.Frames)
		local := Statuses{}
		for _, a := range acks {
			local.Inc(a.Status, nil)
			if a.Status/100 == 2 {
				r.records++
				r.bytes += int64(c.FrameSize)
			}
		}
		if err != nil {
			local["bad_response"]++
		}
		mu.Lock()
		frameStatuses.Add(local)
		mu.Unlock()
		return r
	})
	return frameStatuses, st
}
