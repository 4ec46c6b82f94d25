package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync/atomic"
	"time"
)

// manyConfig configures the many-streams workload (issue 19, target 6).
type manyConfig struct {
	Streams    int           // streams created in the bucket
	Setup      bool          // create and append to them (false: they exist from an earlier run)
	Conns      int           // setup requests in flight
	Spread     int           // streams the spread appends cycle over
	PageLimit  int           // listing page size
	PageReps   int           // listing requests per cursor position
	Settle     time.Duration // wait before reading RSS
	ServerPID  int
	loopWindow // of each append loop
}

func runMany(args []string) error {
	fs := flag.NewFlagSet("many", flag.ContinueOnError)
	common := registerCommon(fs)
	var c manyConfig
	fs.IntVar(&c.Streams, "streams", 1000000, "streams to create in the bucket (a few bytes each)")
	fs.BoolVar(&c.Setup, "setup", true, "create the streams and append once to each; false: they exist already (same --bucket and --prefix)")
	fs.IntVar(&c.Conns, "conns", 32, "setup requests in flight (keep-alive connections)")
	fs.IntVar(&c.Spread, "spread", 100000, "streams the spread appends cycle over (at most --streams; compared with 100 streams in the same run)")
	registerWindow(fs, &c.loopWindow, 8*time.Second, "each append loop")
	fs.IntVar(&c.PageLimit, "page-limit", 100, "listing page size (limit=, 1..1000)")
	fs.IntVar(&c.PageReps, "page-reps", 50, "listing requests per cursor position")
	fs.DurationVar(&c.Settle, "settle", 3*time.Second, "wait after the setup before reading the server's RSS")
	registerServerPID(fs, &c.ServerPID, "VmRSS and CPU time are read from /proc")
	fs.Usage = flagUsage(fs, "many", "Many streams in one bucket (issue 19, target 6): creates --streams streams with PUT and\n"+
		"appends once to each, reports the server's RSS per stream; then closed-loop appends (50\n"+
		"connections, 100 B) spread over --spread streams against the same over 100 streams (ratio),\n"+
		"and the latency of a listing page (GET {base}/{bucket}/streams?after=&limit=, extension §1.4) at the first, middle\n"+
		"and last cursor. The RESULT line names a stream to probe after a restart (probe_url).")
	cm, err := common(args)
	if err != nil {
		return err
	}
	if cm.Bucket == "" {
		cm.Bucket = "many"
	}
	c.Spread = min(c.Spread, c.Streams)
	if c.Streams < 1 || c.Conns < 1 || c.Spread < 1 || c.PageLimit < 1 || c.PageLimit > 1000 || c.PageReps < 1 {
		return errors.New("need --streams, --conns, --spread, --page-reps >= 1 and 1 <= --page-limit <= 1000")
	}
	t := newTarget(cm, max(c.Conns, 50))
	ctx := context.Background()
	if err := t.Prepare(ctx); err != nil {
		return unsupportedOr("many", cm.Tags, err)
	}
	r := NewResult("many", cm.Tags)
	r.Set("streams", c.Streams)
	if err := manySetup(ctx, t, c, r); err != nil {
		return err
	}
	if err := manySpread(ctx, t, c, r); err != nil {
		return err
	}
	if err := manyListing(ctx, t, c, r); err != nil {
		return err
	}
	r.Set("probe_url", t.StreamURL(t.StreamName(c.Streams-1)))
	fmt.Println(r)
	return nil
}

// manySetup creates the streams and appends once to each, then reads the server's RSS.
func manySetup(ctx context.Context, t *Target, c manyConfig, r *Result) error {
	before, _ := rssKiB(c.ServerPID)
	if c.Setup {
		start := time.Now()
		var done atomic.Int64
		stop := progress("many: setup", &done, c.Streams)
		body := []byte("x\n")
		err := forEach(ctx, c.Streams, c.Conns, func(ctx context.Context, i int) error {
			name := t.StreamName(i)
			if _, err := t.CreateStream(ctx, name, "text/plain"); err != nil {
				return err
			}
			st, b, err := t.do(ctx, http.MethodPost, t.StreamURL(name), map[string]string{"Content-Type": "text/plain"}, body)
			if err != nil || st/100 != 2 {
				return fmt.Errorf("append to %s: HTTP %d %s %v", name, st, trimBody(b), err)
			}
			done.Add(1)
			return nil
		})
		stop()
		if err != nil {
			return err
		}
		el := time.Since(start)
		fmt.Printf("many: %d streams created and appended to once in %v (%.0f streams/s)\n",
			c.Streams, el.Round(time.Millisecond), float64(c.Streams)/el.Seconds())
		r.Set("setup_s", el.Seconds())
		r.Set("setup_streams_per_s", float64(c.Streams)/el.Seconds())
	}
	if c.ServerPID <= 0 {
		return nil
	}
	time.Sleep(c.Settle)
	after, err := rssKiB(c.ServerPID)
	if err != nil {
		return err
	}
	per := float64(after) * 1024 / float64(c.Streams)
	growth := float64(after-before) * 1024 / float64(c.Streams)
	fmt.Printf("server VmRSS: %d KiB before, %d KiB after: %.0f B per stream (growth %.0f B per stream)\n",
		before, after, per, growth)
	r.Set("rss_before_kib", before)
	r.Set("rss_after_kib", after)
	r.Set("per_stream_b", per)
	r.Set("growth_per_stream_b", growth)
	// The split: the Go heap and stacks (anonymous) against the data file's pages that dsd
	// has mapped (bbolt reads through mmap): the latter follow the file's size.
	anon, err1 := readStatusKiB(c.ServerPID, "RssAnon")
	file, err2 := readStatusKiB(c.ServerPID, "RssFile")
	if err1 == nil && err2 == nil {
		fmt.Printf("server RssAnon %d KiB (%.0f B per stream), RssFile %d KiB (%.0f B per stream)\n",
			anon, float64(anon)*1024/float64(c.Streams), file, float64(file)*1024/float64(c.Streams))
		r.Set("rss_anon_kib", anon)
		r.Set("rss_file_kib", file)
	}
	return nil
}

// rssKiB reads the server's VmRSS; 0 without a pid.
func rssKiB(pid int) (int64, error) {
	if pid <= 0 {
		return 0, nil
	}
	return readVmRSS(pid)
}

// progress prints done/total every 10 s until the returned stop is called.
func progress(label string, done *atomic.Int64, total int) (stop func()) {
	quit := make(chan struct{})
	go func() {
		tk := time.NewTicker(10 * time.Second)
		defer tk.Stop()
		for {
			select {
			case <-quit:
				return
			case <-tk.C:
				fmt.Printf("%s: %d/%d\n", label, done.Load(), total)
			}
		}
	}()
	return func() { close(quit) }
}

// manySpread runs closed-loop appends over 100 streams (fewer when there are fewer), then
// twice over c.Spread streams, then over 100 again, and reports the spread figures
// against the mean of the two 100-stream ones. The spread runs start the 50 writers at
// evenly spaced streams, so each append goes to a stream not written since the setup
// (cold: a server that keeps a bounded set in memory loads it again), then, in the
// second run, over the same streams again (warm: the steady state of spread appends).
func manySpread(ctx context.Context, t *Target, c manyConfig, r *Result) error {
	run := func(label string, streams int) (float64, error) {
		spread := streams > 100
		warmup := c.Warmup
		if spread {
			warmup = 0 // the cold run measures first touches, the warm one repeats them
		}
		ac := appendConfig{Streams: streams, Conns: 50, Size: 100, loopWindow: loopWindow{c.Duration, warmup}, Spread: spread}
		cpu0, err0 := serverCPU(c.ServerPID)
		st := appendLoop(ctx, t, ac, "text/plain")
		cpu1, err1 := serverCPU(c.ServerPID)
		rps := st.perSecond(st.Ops)
		fmt.Printf("many: %s appends over %d streams: %.0f req/s (%d streams touched); statuses %s\n",
			label, streams, rps, min(int64(streams), st.AllOps), st.Statuses)
		printLatency(stdout, "latency", &st.Latency)
		r.Set(label+"_rps", rps)
		r.SetLatency(label+"_", &st.Latency)
		if c.ServerPID > 0 && err0 == nil && err1 == nil {
			r.Set(label+"_server_cpu_us_per_req", cpuPerOp(cpu1-cpu0, st.AllOps))
		}
		r.SetStatuses(label+"_", st.Statuses)
		if st.Statuses.Errors() > 0 {
			return rps, fmt.Errorf("appends over %d streams: statuses %s", streams, st.Statuses)
		}
		return rps, nil
	}
	few := min(100, c.Streams)
	a, err := run("append100a", few)
	if err != nil {
		return err
	}
	cold, err := run("spread_cold", c.Spread)
	if err != nil {
		return err
	}
	s, err := run("spread", c.Spread)
	if err != nil {
		return err
	}
	b, err := run("append100b", few)
	if err != nil {
		return err
	}
	base := (a + b) / 2
	r.Set("spread_streams", c.Spread)
	r.Set("append100_rps", base)
	r.Set("spread_ratio", s/base)
	r.Set("spread_cold_ratio", cold/base)
	fmt.Printf("many: spread over %d streams = %.0f%% of the 100-stream figure (%.0f vs %.0f req/s); cold (first touches) %.0f%%\n",
		c.Spread, 100*s/base, s, base, 100*cold/base)
	return nil
}

// listingCursors returns the after= cursors of the first, middle and last full page of a
// listing of the run's streams (stream ids sort as strings).
func listingCursors(t *Target, n, limit int) [3]string {
	names := make([]string, n)
	for i := range names {
		names[i] = t.StreamName(i)
	}
	slices.Sort(names)
	last := max(n-limit-1, 0)
	return [3]string{"", names[min(n/2, last)], names[last]}
}

// manyListing times listing pages at the first, middle and last cursor, interleaved.
func manyListing(ctx context.Context, t *Target, c manyConfig, r *Result) error {
	cursors := listingCursors(t, c.Streams, c.PageLimit)
	labels := [3]string{"list_first", "list_middle", "list_last"}
	var hs [3]Histogram
	for rep := 0; rep < c.PageReps; rep++ {
		for i, after := range cursors {
			u := t.Base + "/" + t.Bucket + "/streams?limit=" + strconv.Itoa(c.PageLimit)
			if after != "" {
				u += "&after=" + url.QueryEscape(after)
			}
			t0 := time.Now()
			st, b, err := t.do(ctx, http.MethodGet, u, nil, nil)
			if err != nil || st != http.StatusOK {
				return fmt.Errorf("list %s: HTTP %d %s %v", u, st, trimBody(b), err)
			}
			hs[i].Record(time.Since(t0))
		}
	}
	lo, hi := time.Duration(1<<62), time.Duration(0)
	for i := range hs {
		p50 := hs[i].Quantile(0.5)
		printLatency(stdout, "many: "+labels[i], &hs[i])
		r.Set(labels[i]+"_p50_ms", p50)
		lo, hi = min(lo, p50), max(hi, p50)
	}
	r.Set("list_ratio", float64(hi)/float64(max(lo, 1)))
	fmt.Printf("many: listing page (limit %d) p50 max/min over the cursors = %.2f\n", c.PageLimit, float64(hi)/float64(max(lo, 1)))
	return nil
}
