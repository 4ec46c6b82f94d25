package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"runtime"
	"sync"
	"time"
)

// replayConfig configures the replay workload.
type replayConfig struct {
	Clients    int  // concurrent readers; client i reads stream i mod Streams
	Streams    int  // pre-filled streams
	Messages   int  // messages per stream
	MsgSize    int  // bytes per message
	SetupConns int  // requests in flight during setup
	Setup      bool // create and fill the streams first
	Read       bool // run the readers
	Bootstrap  bool // read with GET {stream}/bootstrap instead of catch-up
	Snapshot   bool // publish a snapshot at the midpoint during setup
	SnapSize   int  // snapshot blob size in bytes; 0 = the first half's bytes
	PutBody    bool // setup: create each stream with its whole content as the PUT body
	ServerPID  int  // server process whose CPU per MB read is taken from /proc (0 = not reported)
}

func runReplay(args []string) error {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	common := registerCommon(fs)
	var c replayConfig
	fs.IntVar(&c.Clients, "clients", 500, "concurrent readers; client i reads stream i mod --streams")
	fs.IntVar(&c.Streams, "streams", 0, "pre-filled streams (default: --clients)")
	fs.IntVar(&c.Messages, "messages", 50, "messages per stream (setup)")
	fs.IntVar(&c.MsgSize, "msg-size", 4096, "bytes per message (setup); stream size = messages x msg-size")
	fs.IntVar(&c.SetupConns, "setup-conns", 32, "requests in flight during setup")
	fs.BoolVar(&c.Setup, "setup", true, "create and fill the streams (use --setup=false --prefix P to re-read streams an earlier run filled)")
	fs.BoolVar(&c.Read, "read", true, "run the readers (--read=false: setup only)")
	fs.BoolVar(&c.Bootstrap, "bootstrap", false, "read each stream with one GET {stream}/bootstrap (multipart/mixed) instead of catch-up reads")
	fs.BoolVar(&c.PutBody, "put-body", false, "setup: create each stream with its whole content (messages x msg-size bytes) as the PUT body: one request per stream, one message")
	registerServerPID(fs, &c.ServerPID, "CPU time per MB read is reported, from /proc/PID/stat")
	fs.BoolVar(&c.Snapshot, "snapshot", false, "setup: publish a snapshot at the midpoint offset (PUT {stream}/snapshot/{offset}) where the server supports it")
	fs.IntVar(&c.SnapSize, "snapshot-size", 0, "with --snapshot: the snapshot blob's size in bytes (0: the first half's bytes)")
	fs.Usage = flagUsage(fs, "replay", "Clients read whole pre-filled streams at once: catch-up (GET ?offset=-1, following\n"+
		"Stream-Next-Offset until Stream-Up-To-Date) or /bootstrap. Reports per-client replay time\n"+
		"(p50/p99), per-request latency and MB/s, and checks every client got the whole stream.\n"+
		"Catch-up readers open their keep-alive connection (one HEAD) before the timer starts and\n"+
		"drop body bytes at the socket (recv MSG_TRUNC), so the generator's share of shared cores\n"+
		"stays small; its CPU per MB is printed beside the server's.")
	cm, err := common(args)
	if err != nil {
		return err
	}
	if c.Streams == 0 {
		c.Streams = c.Clients
	}
	if c.Clients < 1 || c.Streams < 1 || c.Messages < 1 || c.MsgSize < 1 {
		return fmt.Errorf("--clients, --streams, --messages and --msg-size must be >= 1")
	}
	if c.PutBody && c.Snapshot {
		return fmt.Errorf("--snapshot needs appends: drop --put-body")
	}
	t := newTarget(cm, max(c.Clients, c.SetupConns))
	ctx := context.Background()
	if err := t.Prepare(ctx); err != nil {
		return unsupportedOr("replay", cm.Tags, err)
	}
	snapshots := false
	if c.Setup {
		start := time.Now()
		snapshots, err = replaySetup(ctx, t, c)
		if err != nil {
			return err
		}
		fmt.Printf("setup: %d streams x %d messages x %dB in %v (snapshots: %v); prefix %s\n",
			c.Streams, c.Messages, c.MsgSize, time.Since(start).Round(time.Millisecond), snapshots, t.Prefix)
	}
	if !c.Read {
		r := NewResult("replay-setup", cm.Tags)
		r.Set("streams", c.Streams)
		r.Set("stream_bytes", c.Messages*c.MsgSize)
		r.Set("snapshots", snapshots)
		fmt.Println(r)
		return nil
	}
	workload := "replay"
	if c.Bootstrap {
		workload = "replay-bootstrap"
		st, _, err := t.do(ctx, http.MethodGet, t.ExtURL(t.StreamName(0))+"/bootstrap", nil, nil)
		if err != nil {
			return err
		}
		if unsupportedStatus(st) {
			return reportUnsupported(workload, cm.Tags, fmt.Errorf("GET {stream}/bootstrap: HTTP %d", st))
		}
	}
	return replayRead(ctx, t, c, workload)
}

// expectedBytes is what one client reads: the stream, or with --bootstrap and --snapshot
// the snapshot blob followed by the messages after the midpoint.
func (c replayConfig) expectedBytes() int64 {
	if !c.Bootstrap || !c.Snapshot {
		return int64(c.Messages * c.MsgSize)
	}
	snap := (c.Messages / 2) * c.MsgSize
	if c.SnapSize > 0 {
		snap = c.SnapSize
	}
	return int64(snap + (c.Messages-c.Messages/2)*c.MsgSize)
}

// replaySetup creates the streams and appends the messages (one stream per worker at a time,
// in order). With c.Snapshot it publishes the first half of each stream as a snapshot at the
// midpoint offset; it reports whether the server accepted the snapshots (204).
func replaySetup(ctx context.Context, t *Target, c replayConfig) (bool, error) {
	const ctype = "application/octet-stream"
	var mu sync.Mutex
	snapshots, retries := c.Snapshot, 0
	var snapshotErr error
	err := forEach(ctx, c.Streams, c.SetupConns, func(ctx context.Context, i int) error {
		msg := replayMessage(i, c.MsgSize)
		if c.PutBody {
			return t.CreateStreamWith(ctx, t.StreamName(i), ctype, bytes.Repeat(msg, c.Messages))
		}
		if _, err := t.CreateStream(ctx, t.StreamName(i), ctype); err != nil {
			return err
		}
		a := newSetupAppender(t, t.StreamName(i), ctype)
		defer func() { mu.Lock(); retries += a.Retries; mu.Unlock() }()
		mid := ""
		for j := range c.Messages {
			tail, err := a.Append(ctx, msg)
			if err != nil {
				return err
			}
			if j+1 == c.Messages/2 {
				mid = tail
			}
		}
		mu.Lock()
		try := snapshots && mid != ""
		mu.Unlock()
		if !try {
			return nil
		}
		half := bytes.Repeat(msg, c.Messages/2)
		if c.SnapSize > 0 {
			half = bytes.Repeat([]byte{'s'}, c.SnapSize)
		}
		st, b, err := t.do(ctx, http.MethodPut, t.ExtURL(t.StreamName(i))+"/snapshot/"+url.PathEscape(mid), map[string]string{"Content-Type": ctype}, half)
		if err != nil {
			return err
		}
		if st != http.StatusNoContent {
			mu.Lock()
			snapshots = false
			if snapshotErr == nil {
				snapshotErr = fmt.Errorf("PUT {stream}/snapshot/{offset}: HTTP %d %s", st, trimBody(b))
			}
			mu.Unlock()
		}
		return nil
	})
	if snapshotErr != nil {
		fmt.Printf("snapshots unsupported: %v\n", snapshotErr)
	}
	if retries > 0 {
		fmt.Printf("setup: warning: %d appends answered with an error and were retried (deduplicated by Producer-Seq)\n", retries)
	}
	return snapshots && err == nil, err
}

// replayMessage returns stream i's message: msgSize bytes of one letter, ending in "\n".
func replayMessage(i, msgSize int) []byte {
	b := make([]byte, msgSize)
	for k := range b {
		b[k] = byte('a' + i%26)
	}
	b[msgSize-1] = '\n'
	return b
}

// replayRead starts every client at once and aggregates their results.
func replayRead(ctx context.Context, t *Target, c replayConfig, workload string) error {
	type clientResult struct {
		elapsed  time.Duration
		bytes    int64
		reqs     int
		lat      Histogram
		statuses Statuses
		err      error
		parts    int
	}
	results := make([]clientResult, c.Clients)
	// Catch-up readers each own a connection read from their own goroutine (writerClients),
	// the same for every server; /bootstrap keeps the shared Transport its figures were
	// first measured with (issue 19 target 7 compares them with an older run).
	// Their connections are opened and warmed (one HEAD each) and their read buffers
	// allocated before the timed window, as keep-alive HTTP clients that replay would have.
	clients := t.writerClients(c.Clients)
	gate := make(chan struct{})
	var ready, wg sync.WaitGroup
	for i := range results {
		ready.Add(1)
		wg.Go(func() {
			res := &results[i]
			res.statuses = Statuses{}
			u := t.StreamURL(t.StreamName(i % c.Streams))
			var buf []byte
			if !c.Bootstrap {
				buf = make([]byte, replayReadBuf)
				res.err = warmConn(ctx, clients[i], u)
			}
			ready.Done()
			<-gate
			if res.err != nil {
				return
			}
			t0 := time.Now()
			if c.Bootstrap {
				res.bytes, res.parts, res.err = bootstrapRead(ctx, t.Client, t.ExtURL(t.StreamName(i%c.Streams)), &res.lat, res.statuses)
				res.reqs = 1
			} else {
				res.bytes, res.reqs, res.err = catchUpRead(ctx, clients[i], u, buf, &res.lat, res.statuses)
			}
			res.elapsed = time.Since(t0)
		})
	}
	ready.Wait()
	runtime.GC() // the buffers' allocation does not start a collection inside the window
	srv0, srvErr0 := serverCPU(c.ServerPID)
	cli0 := processCPU()
	start := time.Now()
	close(gate)
	wg.Wait()
	wall := time.Since(start)
	cli := processCPU() - cli0
	srv1, srvErr1 := serverCPU(c.ServerPID)

	var clientTime, reqLat Histogram
	statuses := Statuses{}
	var total int64
	var reqs, incomplete, failed int
	want := c.expectedBytes()
	var firstErr error
	for _, res := range results {
		reqLat.Merge(&res.lat)
		statuses.Add(res.statuses)
		total += res.bytes
		reqs += res.reqs
		if res.err != nil {
			failed++
			if firstErr == nil {
				firstErr = res.err
			}
			continue
		}
		clientTime.Record(res.elapsed)
		if res.bytes != want {
			incomplete++
		}
	}
	fmt.Printf("%s: %d clients, %d streams of %d B; wall %v, %d requests, %.1f MB/s; statuses %s\n",
		workload, c.Clients, c.Streams, want, wall.Round(time.Millisecond), reqs, float64(total)/wall.Seconds()/1e6, statuses)
	printLatency(stdout, "per-client replay time", &clientTime)
	printLatency(stdout, "per-request latency", &reqLat)
	if failed > 0 || incomplete > 0 {
		fmt.Printf("clients failed: %d (first: %v); clients with a byte count != %d: %d\n", failed, firstErr, want, incomplete)
	}
	r := NewResult(workload, t.Tags)
	r.Set("clients", c.Clients)
	r.Set("streams", c.Streams)
	r.Set("stream_bytes", want)
	r.Set("wall_s", wall.Seconds())
	r.Set("reqs", reqs)
	r.Set("bytes", total)
	r.Set("mb_per_s", float64(total)/wall.Seconds()/1e6)
	r.SetLatency("", &clientTime)
	if reqLat.Count() > 0 {
		r.Set("req_p99_ms", reqLat.Quantile(0.99))
	}
	r.Set("warm_conns", !c.Bootstrap) // catch-up readers' connections opened before the window
	r.Set("failed", failed)
	r.Set("incomplete", incomplete)
	r.SetStatuses("", statuses)
	if total > 0 {
		mb := float64(total) / 1e6
		cliMB := float64(cli.Microseconds()) / mb
		r.Set("client_cpu_us_per_mb", cliMB)
		if c.ServerPID > 0 && srvErr0 == nil && srvErr1 == nil {
			perMB := float64((srv1 - srv0).Microseconds()) / mb
			r.Set("server_cpu_us_per_mb", perMB)
			fmt.Printf("server CPU: %.0f us/MB read; client (this generator) CPU: %.0f us/MB\n", perMB, cliMB)
		} else {
			fmt.Printf("client (this generator) CPU: %.0f us/MB read\n", cliMB)
		}
	}
	fmt.Println(r)
	return nil
}
