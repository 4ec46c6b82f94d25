package main

import (
	"context"
	"flag"
	"fmt"
	"sync/atomic"
	"time"
)

func runFill(args []string) error {
	fs := flag.NewFlagSet("fill", flag.ContinueOnError)
	common := registerCommon(fs)
	streams := fs.Int("streams", 10000, "streams to create")
	total := byteSize(1 << 30)
	fs.Var(&total, "total", "total bytes over all streams (units: KiB, MiB, GiB, kB, MB, GB)")
	chunk := byteSize(64 << 10)
	fs.Var(&chunk, "chunk", "bytes per append")
	conns := fs.Int("conns", 16, "requests in flight (one stream per connection at a time)")
	fs.Usage = flagUsage(fs, "fill", "Creates --streams application/octet-stream streams holding --total bytes together, as\n"+
		"fast as possible (appends of --chunk bytes as an idempotent producer, so a retried append\n"+
		"is not stored twice). Used by tools/bench/startup.sh before restarting the server.\n"+
		"The RESULT line names a stream to probe (probe_url).")
	cm, err := common(args)
	if err != nil {
		return err
	}
	if *streams < 1 || chunk < 1 || *conns < 1 {
		return fmt.Errorf("--streams, --chunk and --conns must be >= 1")
	}
	t := newTarget(cm, *conns)
	ctx := context.Background()
	if err := t.Prepare(ctx); err != nil {
		return unsupportedOr("fill", cm.Tags, err)
	}
	const ctype = "application/octet-stream"
	per, extra := int64(total)/int64(*streams), int64(total)%int64(*streams)
	buf := replayMessage(0, int(chunk))
	var written, appends, retries atomic.Int64
	start := time.Now()
	err = forEach(ctx, *streams, *conns, func(ctx context.Context, i int) error {
		name := t.StreamName(i)
		if _, err := t.CreateStream(ctx, name, ctype); err != nil {
			return err
		}
		a := newSetupAppender(t, name, ctype)
		defer func() { retries.Add(int64(a.Retries)) }()
		left := per
		if int64(i) < extra {
			left++
		}
		for left > 0 {
			n := min(left, int64(chunk))
			if _, err := a.Append(ctx, buf[:n]); err != nil {
				return err
			}
			left -= n
			written.Add(n)
			appends.Add(1)
		}
		return nil
	})
	elapsed := time.Since(start)
	if err != nil {
		return err
	}
	fmt.Printf("fill: %d streams, %d bytes in %d appends in %v = %.1f MB/s (%d retried appends)\n",
		*streams, written.Load(), appends.Load(), elapsed.Round(time.Millisecond),
		float64(written.Load())/elapsed.Seconds()/1e6, retries.Load())
	r := NewResult("fill", cm.Tags)
	r.Set("streams", *streams)
	r.Set("bytes", written.Load())
	r.Set("appends", appends.Load())
	r.Set("dur_s", elapsed.Seconds())
	r.Set("mb_per_s", float64(written.Load())/elapsed.Seconds()/1e6)
	r.Set("retries", retries.Load())
	r.Set("probe_url", t.StreamURL(t.StreamName(*streams-1)))
	fmt.Println(r)
	return nil
}
