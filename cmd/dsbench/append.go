package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// appendConfig configures the append workload.
type appendConfig struct {
	Streams  int  // number of streams written
	Conns    int  // closed-loop writers, one connection each
	Size     int  // payload bytes per append
	Producer bool // idempotent producer headers, one producer per writer
	JSON     bool // application/json streams and bodies
	loopWindow
	// Spread starts writer w at stream w*Streams/Conns instead of w, so that a run touches
	// Conns x iterations distinct streams rather than about iterations (dsbench many).
	Spread bool
	// ServerPID is the server process on this machine whose CPU per request is reported
	// (0 = none).
	ServerPID int
}

func runAppend(args []string) error {
	fs := flag.NewFlagSet("append", flag.ContinueOnError)
	common := registerCommon(fs)
	var c appendConfig
	fs.IntVar(&c.Streams, "streams", 100, "number of streams; writer w writes streams w, w+1, w+2, ... in turn")
	fs.IntVar(&c.Conns, "conns", 50, "closed-loop writers (one keep-alive connection each)")
	fs.IntVar(&c.Size, "size", 100, "payload bytes per append (JSON: a {\"p\":\"xx..\"} object of exactly this size, >= 8)")
	registerWindow(fs, &c.loopWindow, 10*time.Second, "")
	fs.BoolVar(&c.Producer, "producer", false, "idempotent producer headers (Producer-Id/Epoch/Seq): one producer per writer, epoch 0, seq +1 per append per stream")
	fs.BoolVar(&c.JSON, "json", false, "application/json streams and bodies instead of text/plain")
	registerServerPID(fs, &c.ServerPID, "CPU time per request is reported, from /proc/PID/stat")
	fs.Usage = flagUsage(fs, "append", "Closed-loop single-message appends (POST {stream}); reports requests/s and latency.")
	cm, err := common(args)
	if err != nil {
		return err
	}
	if c.Streams < 1 || c.Conns < 1 || c.Size < 1 || (c.JSON && c.Size < 8) {
		return fmt.Errorf("need --streams, --conns >= 1 and --size >= 1 (>= 8 with --json)")
	}
	t := newTarget(cm, c.Conns)
	ctx := context.Background()
	if err := t.Prepare(ctx); err != nil {
		return unsupportedOr("append", cm.Tags, err)
	}
	ctype := "text/plain"
	if c.JSON {
		ctype = "application/json"
	}
	if err := t.CreateStreams(ctx, c.Streams, min(c.Conns, 32), ctype); err != nil {
		return err
	}
	fmt.Printf("append: %s streams=%d conns=%d size=%dB producer=%v json=%v warmup=%v duration=%v\n",
		t.StreamURL(t.StreamName(0)), c.Streams, c.Conns, c.Size, c.Producer, c.JSON, c.Warmup, c.Duration)
	srv0, srvErr0 := serverCPU(c.ServerPID)
	st := appendLoop(ctx, t, c, ctype)
	srv1, srvErr1 := serverCPU(c.ServerPID)
	r := NewResult("append", cm.Tags)
	r.Set("streams", c.Streams)
	r.Set("conns", c.Conns)
	r.Set("size", c.Size)
	r.Set("producer", c.Producer)
	r.Set("json", c.JSON)
	r.Set("dur_s", st.Elapsed.Seconds())
	r.Set("reqs", st.Ops)
	r.Set("rps", st.perSecond(st.Ops))
	r.Set("mb_per_s", st.perSecond(st.Bytes)/1e6)
	r.SetLatency("", &st.Latency)
	r.SetStatuses("", st.Statuses)
	r.Set("client_cpu_us_per_req", cpuPerOp(st.CPU, st.AllOps))
	if c.ServerPID > 0 && srvErr0 == nil && srvErr1 == nil {
		// Over the whole loop, warm-up included, as the client's.
		r.Set("server_cpu_us_per_req", cpuPerOp(srv1-srv0, st.AllOps))
		fmt.Printf("server CPU: %.1f us/request\n", cpuPerOp(srv1-srv0, st.AllOps))
	}
	fmt.Printf("requests: %d in %.2fs = %.1f/s, %.2f MB/s acknowledged; statuses %s; client CPU %.1f us/request\n",
		st.Ops, st.Elapsed.Seconds(), st.perSecond(st.Ops), st.perSecond(st.Bytes)/1e6, st.Statuses, cpuPerOp(st.CPU, st.AllOps))
	printLatency(stdout, "latency", &st.Latency)
	fmt.Println(r)
	return nil
}

// appendPayload returns a body of exactly size bytes: text is 'x'*(size-1)+"\n"; JSON is
// {"p":"xx..x"}.
func appendPayload(size int, json bool) []byte {
	if json {
		return []byte(`{"p":"` + string(bytes.Repeat([]byte("x"), size-8)) + `"}`)
	}
	return append(bytes.Repeat([]byte("x"), size-1), '\n')
}

// appendLoop runs the closed loop of single-message appends.
func appendLoop(ctx context.Context, t *Target, c appendConfig, ctype string) *loopStats {
	body := appendPayload(c.Size, c.JSON)
	urls := make([]string, c.Streams)
	for i := range urls {
		urls[i] = t.StreamURL(t.StreamName(i))
	}
	// seqs[w][s] is writer w's next Producer-Seq on stream s.
	seqs := make([][]int64, c.Conns)
	producerIDs := make([]string, c.Conns)
	for w := range seqs {
		seqs[w] = make([]int64, c.Streams)
		producerIDs[w] = t.Prefix + "-w" + strconv.Itoa(w)
	}
	clients := t.writerClients(c.Conns)
	return closedLoop(ctx, c.Conns, c.Warmup, c.Duration, func(ctx context.Context, w, iter int, _ bool) opResult {
		s := (w + iter) % c.Streams
		if c.Spread {
			s = (w*(c.Streams/c.Conns) + iter) % c.Streams
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, urls[s], bytes.NewReader(body))
		if err != nil {
			return opResult{err: err}
		}
		req.Header.Set("Content-Type", ctype)
		if c.Producer {
			req.Header.Set("Producer-Id", producerIDs[w])
			req.Header.Set("Producer-Epoch", "0")
			req.Header.Set("Producer-Seq", strconv.FormatInt(seqs[w][s], 10))
		}
		resp, err := clients[w].Do(req)
		if err != nil {
			return opResult{err: err}
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		r := opResult{status: resp.StatusCode, err: err}
		if err == nil && resp.StatusCode/100 == 2 {
			r.records, r.bytes = 1, int64(len(body))
			seqs[w][s]++
		} else if exp := resp.Header.Get("Producer-Expected-Seq"); c.Producer && exp != "" {
			// A lost response left our count behind or ahead: follow the server's.
			if n, perr := strconv.ParseInt(exp, 10, 64); perr == nil {
				seqs[w][s] = n
			}
		}
		return r
	})
}
