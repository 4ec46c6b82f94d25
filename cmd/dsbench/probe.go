package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"time"
)

func runProbe(args []string) error {
	fs := flag.NewFlagSet("probe", flag.ContinueOnError)
	u := fs.String("url", "", "stream URL to HEAD (required)")
	since := fs.Int64("since-ns", 0, "Unix time in ns to measure from, e.g. $(date +%s%N) taken just before starting the server (default: now)")
	timeout := fs.Duration("timeout", 60*time.Second, "give up after this long")
	interval := fs.Duration("interval", 2*time.Millisecond, "pause between attempts")
	tags := fs.String("tags", os.Getenv("BENCH_TAGS"), `extra "key=value ..." pairs for the RESULT line (default $BENCH_TAGS)`)
	fs.Usage = flagUsage(fs, "probe", "Polls HEAD --url until it answers 200 (connection refused and 5xx are retried) and\n"+
		"reports the time from --since-ns to that answer: time-to-first-successful-HEAD after a start.")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *u == "" {
		return errors.New("--url is required")
	}
	kv, err := parseTags(*tags)
	if err != nil {
		return err
	}
	from := time.Now()
	if *since > 0 {
		from = time.Unix(0, *since)
	}
	client := newHTTPClient(1, time.Second)
	deadline := time.Now().Add(*timeout)
	attempts := 0
	statuses := Statuses{}
	for time.Now().Before(deadline) {
		attempts++
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodHead, *u, nil)
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		if err == nil && resp.StatusCode == http.StatusOK {
			ready := time.Since(from)
			fmt.Printf("probe: %s answered 200 after %v (%d attempts; earlier: %s)\n", *u, ready.Round(time.Microsecond), attempts, statuses)
			r := NewResult("startup", kv)
			r.Set("ready_ms", ready)
			r.Set("attempts", attempts)
			fmt.Println(r)
			return nil
		}
		if err != nil {
			statuses.Inc(0, err)
		} else {
			statuses.Inc(resp.StatusCode, nil)
			if resp.StatusCode == http.StatusNotFound {
				fmt.Fprintf(os.Stderr, "probe: %s: 404 (stream lost across the restart?)\n", *u)
			}
		}
		time.Sleep(*interval)
	}
	return fmt.Errorf("no 200 from %s within %v (%d attempts: %s)", *u, *timeout, attempts, statuses)
}
