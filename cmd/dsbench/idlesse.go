package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"
)

func runIdleSSE(args []string) error {
	fs := flag.NewFlagSet("idle-sse", flag.ContinueOnError)
	common := registerCommon(fs)
	subscribers := fs.Int("subscribers", 10000, "idle SSE subscribers to hold (one connection and one file descriptor each; loopback has ~28k ephemeral ports)")
	streams := fs.Int("streams", 1, "spread the subscribers over this many streams")
	pid := fs.Int("server-pid", envInt("DS_SERVER_PID"), "server process whose VmRSS is read from /proc/PID/status (default $DS_SERVER_PID)")
	settle := fs.Duration("settle", 3*time.Second, "wait after all subscribers are connected before reading RSS again")
	connectTimeout := fs.Duration("connect-timeout", 120*time.Second, "time allowed for all subscribers to receive their first control event")
	parallel := fs.Int("connect-parallel", 200, "connection attempts in flight")
	limit := fs.Float64("limit-kib", 20, "report within_limit=1 when the RSS growth per subscriber is at most this many KiB")
	fs.Usage = flagUsage(fs, "idle-sse", "Opens --subscribers SSE subscriptions (offset=now) that receive no data, and reports\n"+
		"the server's RSS growth per subscriber (VmRSS of --server-pid before and after).")
	cm, err := common(args)
	if err != nil {
		return err
	}
	if *pid <= 0 || *subscribers < 1 || *streams < 1 {
		return errors.New("--server-pid (or $DS_SERVER_PID), --subscribers >= 1 and --streams >= 1 are required")
	}
	fdLimit := raiseNoFile(uint64(*subscribers + 1024))
	t := newTarget(cm, 8)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := t.Prepare(ctx); err != nil {
		return unsupportedOr("idle-sse", cm.Tags, err)
	}
	if err := t.CreateStreams(ctx, *streams, 8, "text/plain"); err != nil {
		return err
	}
	time.Sleep(*settle)
	before, err := readVmRSS(*pid)
	if err != nil {
		return err
	}
	fmt.Printf("idle-sse: %d subscribers on %d streams of %s; server pid %d VmRSS %d KiB; fd limit %d\n",
		*subscribers, *streams, cm.Base, *pid, before, fdLimit)

	client := newSSEClient(*subscribers)
	subs := make([]*subscriber, *subscribers)
	for i := range subs {
		subs[i] = newSubscriber(t.StreamURL(t.StreamName(i%*streams)), client, "now")
	}
	start := time.Now()
	wg := startSubscribers(ctx, subs, *parallel, 500*time.Millisecond)
	connected := waitConnected(subs, *connectTimeout)
	connectTime := time.Since(start)
	fmt.Printf("connected: %d/%d in %v\n", connected, *subscribers, connectTime.Round(time.Millisecond))
	time.Sleep(*settle)
	after, err := readVmRSS(*pid)
	if err != nil {
		return err
	}
	cancel()
	wg.Wait()
	statuses := Statuses{}
	reconnects := 0
	for _, s := range subs {
		statuses.Add(s.Statuses)
		reconnects += s.Reconnects
	}
	perSub := 0.0
	if connected > 0 {
		perSub = float64(after-before) / float64(connected)
	}
	fmt.Printf("server VmRSS: %d KiB -> %d KiB: %+d KiB, %.2f KiB per subscriber (limit %.0f KiB); subscribe requests %s; reconnects %d\n",
		before, after, after-before, perSub, *limit, statuses, reconnects)
	r := NewResult("idle-sse", cm.Tags)
	r.Set("subscribers", *subscribers)
	r.Set("streams", *streams)
	r.Set("connected", connected)
	r.Set("connect_s", connectTime.Seconds())
	r.Set("rss_before_kib", before)
	r.Set("rss_after_kib", after)
	r.Set("per_sub_kib", perSub)
	r.Set("within_limit", connected == *subscribers && perSub <= *limit)
	r.Set("reconnects", reconnects)
	r.SetStatuses("", statuses)
	fmt.Println(r)
	return nil
}

// envInt returns the integer value of an environment variable, or 0.
func envInt(name string) int {
	n, _ := strconv.Atoi(os.Getenv(name))
	return n
}
