package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// fanoutConfig configures the fan-out workload.
type fanoutConfig struct {
	Subscribers    int           // SSE subscribers on the one stream
	Rate           float64       // appends per second by the single writer
	Size           int           // bytes per append
	Duration       time.Duration // how long the writer publishes
	Drain          time.Duration // how long to wait after the last append for deliveries
	ConnectTimeout time.Duration // how long subscribers may take to connect
	MaxInFlight    int           // appends the writer may have outstanding at once
	ServerPID      int           // server process whose CPU is read from /proc (0 = not reported)
	Epoll          bool          // read http:// subscribers on one epoll loop, not net/http
	DelayedACKs    bool          // with Epoll: subscribers' sockets delay ACKs (ssePoller.DelayedACKs)
}

func runFanout(args []string) error {
	fs := flag.NewFlagSet("fanout", flag.ContinueOnError)
	common := registerCommon(fs)
	var c fanoutConfig
	fs.IntVar(&c.Subscribers, "subscribers", 1000, "SSE subscribers (GET {stream}?offset=now&live=sse), one connection each")
	fs.Float64Var(&c.Rate, "rate", 50, "appends per second by the one writer (paced, not closed-loop)")
	fs.IntVar(&c.Size, "size", 100, "bytes per append (\"SEQ SENT_NS xx..x\\n\", text/plain)")
	fs.DurationVar(&c.Duration, "duration", 10*time.Second, "how long the writer publishes")
	fs.DurationVar(&c.Drain, "drain", 5*time.Second, "after the last append, wait at most this long for every subscriber to receive everything")
	fs.IntVar(&c.MaxInFlight, "max-inflight", 8, "appends the writer may have outstanding (open-loop pacing; 1 = wait for each answer)")
	registerServerPID(fs, &c.ServerPID, "CPU time per delivery is reported, from /proc/PID/stat")
	fs.BoolVar(&c.Epoll, "epoll", true, "read the subscribers' responses (http:// only) on one epoll loop, one read(2) per delivery; false: net/http, a goroutine each")
	fs.BoolVar(&c.DelayedACKs, "delayed-acks", false, "with --epoll: TCP_QUICKACK off on the subscribers' sockets, one ACK per two deliveries instead of one per read (cheaper for the generator on loopback; a server without TCP_NODELAY may then hold data back)")
	fs.DurationVar(&c.ConnectTimeout, "connect-timeout", 60*time.Second, "time allowed for all subscribers to receive their first control event")
	fs.Usage = flagUsage(fs, "fanout", "One writer appends at --rate to one text/plain stream while --subscribers SSE clients\n"+
		"follow it from offset=now. Reports publish-to-receive latency per (event, subscriber), and\n"+
		"per-subscriber lost and duplicated events. Subscribers reconnect from the last control\n"+
		"event's streamNextOffset when the server ends a response. The subscribers of an http://\n"+
		"server are read on one epoll loop (--epoll), so that the generator costs less CPU per\n"+
		"delivery than the server it shares the cores with.")
	cm, err := common(args)
	if err != nil {
		return err
	}
	if c.Subscribers < 1 || c.Rate <= 0 || c.Size < 1 || c.MaxInFlight < 1 {
		return fmt.Errorf("--subscribers >= 1, --rate > 0, --size >= 1 and --max-inflight >= 1 required")
	}
	raiseNoFile(uint64(c.Subscribers + 1024))
	t := newTarget(cm, 4)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := t.Prepare(ctx); err != nil {
		return unsupportedOr("fanout", cm.Tags, err)
	}
	name := t.StreamName(0)
	if _, err := t.CreateStream(ctx, name, "text/plain"); err != nil {
		return err
	}
	streamURL := t.StreamURL(name)
	fmt.Printf("fanout: %s subscribers=%d rate=%.1f/s size=%dB duration=%v\n", streamURL, c.Subscribers, c.Rate, c.Size, c.Duration)

	base := time.Now()
	cpu0 := processCPU()
	client := newSSEClient(c.Subscribers)
	poller, err := fanoutPoller(ctx, c.Epoll && pollable(streamURL), c.DelayedACKs)
	if err != nil {
		return err
	}
	subs := make([]*subscriber, c.Subscribers)
	trackers := make([]*fanoutTracker, c.Subscribers)
	uniques := make([]atomic.Int64, c.Subscribers)
	for i := range subs {
		tr := newFanoutTracker()
		trackers[i] = tr
		subs[i] = newSubscriber(streamURL, client, "now")
		subs[i].Poller = poller
		subs[i].OnData = func(data []byte, at time.Time) {
			tr.Observe(data, at.Sub(base))
			uniques[i].Store(tr.Unique)
		}
	}
	connectStart := time.Now()
	wg := startSubscribers(ctx, subs, 64, 200*time.Millisecond)
	connected := waitConnected(subs, c.ConnectTimeout)
	fmt.Printf("subscribers: %d/%d connected in %v\n", connected, c.Subscribers, time.Since(connectStart).Round(time.Millisecond))

	writer := newTarget(cm, c.MaxInFlight)
	srvCPU0, srvErr := serverCPU(c.ServerPID)
	acked, pubLat, pubStatuses, writerTime := fanoutWriter(ctx, writer, streamURL, c, base)
	published := int64(len(acked))
	ackedCount := int64(0)
	for _, a := range acked {
		if a {
			ackedCount++
		}
	}
	// Drain: wait until every subscriber has every published event, or the drain time ends.
	drainUntil := time.Now().Add(c.Drain)
	for time.Now().Before(drainUntil) && !allReceived(uniques, ackedCount) {
		time.Sleep(20 * time.Millisecond)
	}
	srvCPU1, srvErr1 := serverCPU(c.ServerPID)
	cancel()
	wg.Wait()

	var lat Histogram
	var lost, dups, reordered, malformed, subsWithLoss, subsWithDups, reconnects int64
	connStatuses := Statuses{}
	for i, tr := range trackers {
		l := tr.Lost(acked)
		lost += l
		if l > 0 {
			subsWithLoss++
		}
		if tr.Dups > 0 {
			subsWithDups++
		}
		dups += tr.Dups
		reordered += tr.Reordered
		malformed += tr.Malformed
		lat.Merge(&tr.Latency)
		reconnects += int64(subs[i].Reconnects)
		connStatuses.Add(subs[i].Statuses)
	}
	expected := ackedCount * int64(c.Subscribers)
	achieved := float64(published) / writerTime.Seconds()
	fmt.Printf("published: %d appends in %v = %.1f/s (target %.1f/s, open-loop), %d acknowledged; statuses %s\n",
		published, writerTime.Round(time.Millisecond), achieved, c.Rate, ackedCount, pubStatuses)
	printLatency(stdout, "append latency", pubLat)
	fmt.Printf("deliveries: %d of %d expected; lost %d (%d subscribers), duplicated %d (%d subscribers), reordered %d, malformed %d, reconnects %d\n",
		int64(lat.Count()), expected, lost, subsWithLoss, dups, subsWithDups, reordered, malformed, reconnects)
	fmt.Printf("subscribe requests: %s\n", connStatuses)
	printLatency(stdout, "publish-to-receive latency", &lat)

	r := NewResult("fanout", cm.Tags)
	r.Set("subscribers", c.Subscribers)
	r.Set("connected", connected)
	r.Set("rate", c.Rate)
	r.Set("achieved_rate", achieved)
	r.Set("size", c.Size)
	r.Set("dur_s", c.Duration.Seconds())
	r.Set("published", published)
	r.Set("acked", ackedCount)
	r.Set("expected", expected)
	r.Set("delivered", lat.Count())
	r.Set("lost", lost)
	r.Set("dups", dups)
	r.Set("subs_with_loss", subsWithLoss)
	r.Set("subs_with_dups", subsWithDups)
	r.Set("reordered", reordered)
	r.Set("malformed", malformed)
	r.Set("reconnects", reconnects)
	r.SetLatency("", &lat)
	if pubLat.Count() > 0 {
		r.Set("append_p99_ms", pubLat.Quantile(0.99))
	}
	if lat.Count() > 0 {
		r.Set("client_cpu_us_per_delivery", cpuPerOp(processCPU()-cpu0, int64(lat.Count())))
	}
	if lat.Count() > 0 && c.ServerPID > 0 && srvErr == nil && srvErr1 == nil {
		r.Set("server_cpu_us_per_delivery", cpuPerOp(srvCPU1-srvCPU0, int64(lat.Count())))
	}
	r.SetStatuses("", pubStatuses)
	r.SetStatuses("subscribe_", connStatuses)
	fmt.Println(r)
	return nil
}

// fanoutPoller starts the poller the subscribers are read on, until ctx ends; nil when on is
// false (they use net/http then).
func fanoutPoller(ctx context.Context, on, delayedACKs bool) (*ssePoller, error) {
	if !on {
		return nil, nil
	}
	p, err := newSSEPoller()
	if err != nil {
		return nil, fmt.Errorf("--epoll: %w", err)
	}
	p.DelayedACKs = delayedACKs
	go p.Run(ctx.Done())
	return p, nil
}

// serverCPU reads the CPU time of the server process pid, when one is given.
func serverCPU(pid int) (time.Duration, error) {
	if pid <= 0 {
		return 0, nil
	}
	d, err := readProcCPU(pid)
	if err != nil {
		fmt.Fprintf(os.Stderr, "dsbench: server CPU not reported: %v\n", err)
	}
	return d, err
}

// allReceived reports whether every subscriber has at least n distinct events.
func allReceived(uniques []atomic.Int64, n int64) bool {
	for i := range uniques {
		if uniques[i].Load() < n {
			return false
		}
	}
	return true
}

// fanoutWriter starts one append every 1/Rate seconds for Duration, open-loop: an append does
// not wait for the previous one's answer, up to c.MaxInFlight at once (beyond that the writer
// waits, and the achieved rate, reported, drops). Message i carries sequence number i and its
// send time; concurrent appends may land out of order (subscribers count that as reordered,
// not as an error). acked[i] tells whether append i was acknowledged (2xx): a failed append
// may still have landed, so subscribers are held to the acknowledged ones only. elapsed is the
// writer's wall time until the last answer.
func fanoutWriter(ctx context.Context, t *Target, u string, c fanoutConfig, base time.Time) (acked []bool, lat *Histogram, statuses Statuses, elapsed time.Duration) {
	interval := time.Duration(float64(time.Second) / c.Rate)
	statuses = Statuses{}
	lat = &Histogram{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	slots := make(chan struct{}, c.MaxInFlight)
	start := time.Now()
	for i := 0; ; i++ {
		next := start.Add(time.Duration(i) * interval)
		if next.Sub(start) >= c.Duration || time.Since(start) >= c.Duration || ctx.Err() != nil {
			break
		}
		if d := time.Until(next); d > 0 {
			time.Sleep(d)
		}
		slots <- struct{}{}
		mu.Lock()
		acked = append(acked, false)
		mu.Unlock()
		t0 := time.Now()
		body := fanoutPayload(int64(i), t0.Sub(base), c.Size)
		wg.Go(func() {
			defer func() { <-slots }()
			status, err := postOnce(ctx, t, u, "text/plain", body)
			d := time.Since(t0)
			mu.Lock()
			defer mu.Unlock()
			statuses.Inc(status, err)
			if err == nil {
				lat.Record(d)
			}
			acked[i] = err == nil && status/100 == 2
		})
	}
	wg.Wait()
	return acked, lat, statuses, time.Since(start)
}

// postOnce POSTs body and reads the answer; status is 0 on a transport error.
func postOnce(ctx context.Context, t *Target, u, ctype string, body []byte) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", ctype)
	resp, err := t.Client.Do(req)
	if err != nil {
		return 0, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, err
}
