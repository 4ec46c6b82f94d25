// Command dslincheck checks a Durable Streams server for linearizability and for the
// guarantees of its live reads, with the porcupine model of package linearizability.
//
// Record a live run against any server and check it:
//
//	dslincheck --base-url http://127.0.0.1:4437 [--surface flat|bucketed] [--bucket lincheck]
//	    [--stream-path /v1/stream/] [--extensions auto|none|a,b] [--clients 8] [--ops 2000]
//	    [--streams 4] [--report-dir DIR]
//
// --extensions auto (the default) probes the server as dsconform does and runs the
// operations of the extensions it has (append-batch, snapshot, bootstrap,
// json-record-coordinates-v1, fork), so a base-protocol server needs no flag.
// --base-url may be given several times (or as a comma-separated list): the servers of
// one cluster, requests spread over them in turn.
//
// Re-check saved histories (history.jsonl from a report directory, or fixtures):
//
//	dslincheck [--expect-violation] [--report-dir DIR] HISTORY.jsonl...
//
// --stale-proxy puts a deliberately stale caching proxy between the checker and the
// server: a self-test, which must report a violation (use with --expect-violation).
//
// The exit status is 0 when every check passed (with --expect-violation: when every run
// or history was reported as violating), 1 otherwise, 2 for usage errors.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dsd-project/dsd/conformance"
	"github.com/dsd-project/dsd/linearizability"
)

type options struct {
	baseURLs                            []string
	baseURL, surface, bucket, reportDir string
	streamPath, extensions, compat      string
	clients, ops, streams, followers    int
	seed                                uint64
	timeout, checkTimeout, liveTimeout  time.Duration
	liveRetry                           time.Duration
	staleProxy                          bool
	staleTTL                            time.Duration
	expectViolation, exclusive, base    bool
	concurrentBootstrap                 bool
	files                               []string
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("dslincheck", flag.ContinueOnError)
	fs.Func("base-url", "record and check a live run against this server (no trailing slash needed); repeat it, or give a comma-separated list, for the servers of one cluster", func(s string) error {
		for _, u := range strings.Split(s, ",") {
			if u = strings.TrimSpace(u); u != "" {
				o.baseURLs = append(o.baseURLs, strings.TrimSuffix(u, "/"))
			}
		}
		return nil
	})
	fs.StringVar(&o.surface, "surface", "flat", "URL layout: flat ({base}{stream-path}{name}) or bucketed ({base}/{bucket}/{name})")
	fs.StringVar(&o.streamPath, "stream-path", "/v1/stream/", "flat surface stream prefix")
	fs.StringVar(&o.compat, "compat-bucket", "default", "flat surface: the bucket behind it, where a stream's extension sub-resources live (dsd's --compat-bucket, D1)")
	fs.StringVar(&o.bucket, "bucket", "lincheck", "bucket of the bucketed surface (created if missing)")
	fs.StringVar(&o.extensions, "extensions", "auto", "extensions whose operations run: auto (probe the server, as dsconform does), none, or a comma-separated list of append-batch, snapshot, bootstrap, json-record-coordinates-v1, fork")
	fs.StringVar(&o.reportDir, "report-dir", "", "write history.jsonl, history.html and summary.txt here (per input file: a subdirectory)")
	fs.IntVar(&o.clients, "clients", 8, "concurrent clients")
	fs.IntVar(&o.ops, "ops", 2000, "operations of the main phase")
	fs.IntVar(&o.streams, "streams", 4, "streams (one porcupine partition each)")
	fs.IntVar(&o.followers, "followers", 1, "live readers per stream and live mode (long-poll, SSE)")
	fs.Uint64Var(&o.seed, "seed", 0, "workload seed (0: random; printed)")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Second, "per-request timeout; a write that runs out has an unknown outcome")
	fs.DurationVar(&o.liveRetry, "live-retry", 0, "live readers retry a failed request or a 502/503 after this pause, from the same offset (clusters under a nemesis); 0: a failure ends the reader")
	fs.DurationVar(&o.checkTimeout, "check-timeout", time.Minute, "bound on the linearizability search; running out is a failure")
	fs.DurationVar(&o.liveTimeout, "live-timeout", 30*time.Second, "how long live readers may take to reach EOF once every stream is closed")
	fs.BoolVar(&o.staleProxy, "stale-proxy", false, "self-test: check through a proxy that serves stale catch-up reads (a violation is expected)")
	fs.DurationVar(&o.staleTTL, "stale-ttl", time.Second, "how long --stale-proxy serves a cached read")
	fs.BoolVar(&o.expectViolation, "expect-violation", false, "succeed only if every run or history is reported as violating")
	fs.BoolVar(&o.base, "base-only", false, "the same as --extensions none")
	fs.BoolVar(&o.concurrentBootstrap, "concurrent-bootstrap", true, "run /bootstrap alongside writes (false: with no write in flight on its stream, to isolate a bootstrap bug)")
	fs.BoolVar(&o.exclusive, "exclusive-conflicts", false, "run closes and Stream-Seq appends alone on their stream, to tell refusals sent before the write they reveal is durable from other bugs (weakens the check)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usageText)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	o.files = fs.Args()
	if len(o.baseURLs) > 0 {
		o.baseURL = o.baseURLs[0]
	}
	if _, err := conformance.ParseExtensions(o.extensions); err != nil {
		return o, fmt.Errorf("--extensions: %w", err)
	}
	switch {
	case o.baseURL == "" && len(o.files) == 0:
		fs.Usage()
		return o, errors.New("give --base-url or history files")
	case o.baseURL != "" && len(o.files) > 0:
		return o, errors.New("give --base-url or history files, not both")
	case o.surface != string(linearizability.SurfaceFlat) && o.surface != string(linearizability.SurfaceBucketed):
		return o, fmt.Errorf("--surface must be flat or bucketed, not %q", o.surface)
	case !strings.HasPrefix(o.streamPath, "/") || !strings.HasSuffix(o.streamPath, "/"):
		return o, fmt.Errorf("--stream-path %q must start and end with /", o.streamPath)
	case o.staleProxy && len(o.baseURLs) > 1:
		return o, errors.New("--stale-proxy takes one --base-url")
	}
	return o, nil
}

const usageText = `Usage:
  dslincheck --base-url URL [flags]      record a concurrent run against a server, then check it
  dslincheck [flags] HISTORY.jsonl...    re-check saved histories (--report-dir writes them)

Checks a Durable Streams server's histories for linearizability (porcupine) and the
offset and live-read rules. Keep --ops small on a shared machine.

Exit status: 0 when every run or history passes (with --expect-violation: when each
violates); 1 when one does not, or on a failure to run; 2 on a usage error.

Flags:
`

func main() {
	o, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "dslincheck:", err)
		os.Exit(2)
	}
	ok, err := run(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "dslincheck:", err)
		os.Exit(1)
	}
	if !ok {
		os.Exit(1)
	}
}

// run performs the checks; ok is the verdict after --expect-violation.
func run(o options) (bool, error) {
	if o.baseURL != "" {
		violated, err := live(o)
		if err != nil {
			return false, err
		}
		return violated == o.expectViolation, nil
	}
	ok := true
	for _, f := range o.files {
		violated, err := recheck(o, f)
		if err != nil {
			return false, err
		}
		if violated != o.expectViolation {
			ok = false
		}
	}
	return ok, nil
}

// live records a run against o.baseURL and checks it; violated reports the verdict.
func live(o options) (violated bool, err error) {
	base := strings.TrimSuffix(o.baseURL, "/")
	if o.staleProxy {
		up, err := url.Parse(base)
		if err != nil {
			return false, err
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return false, err
		}
		srv := &http.Server{Handler: &linearizability.StaleProxy{Upstream: up, TTL: o.staleTTL}}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
		base = "http://" + ln.Addr().String()
		fmt.Printf("dslincheck: checking through a stale caching proxy at %s (TTL %s)\n", base, o.staleTTL)
	}
	if len(o.baseURLs) == 0 {
		o.baseURLs = []string{o.baseURL}
	}
	client := linearizability.NewHTTPClient(base, linearizability.Surface(o.surface), o.bucket)
	client.Timeout, client.StreamPath, client.CompatBucket = o.timeout, o.streamPath, o.compat
	client.LiveRetry = o.liveRetry
	if len(o.baseURLs) > 1 {
		client.Bases = o.baseURLs
	}
	exts, err := extensions(o, client)
	if err != nil {
		return false, err
	}
	cfg := linearizability.Config{Clients: o.clients, Ops: o.ops, Streams: o.streams, Followers: o.followers,
		Seed: o.seed, LiveTimeout: o.liveTimeout, ExclusiveConflicts: o.exclusive, BaseOnly: o.base,
		ConcurrentBootstrap: o.concurrentBootstrap, Extensions: exts}
	start := time.Now()
	runRec, err := linearizability.Record(context.Background(), client, cfg)
	if err != nil {
		return false, fmt.Errorf("recording against %s: %w", o.baseURL, err)
	}
	res := linearizability.CheckRun(runRec, linearizability.CheckOptions{Timeout: o.checkTimeout})
	fmt.Printf("dslincheck: %s (%s surface, extensions %s, %d clients, seed %d, prefix %s, %d live transcripts, recorded in %s)\n",
		strings.Join(o.baseURLs, ","), o.surface, extList(exts), cfg.Clients, runRec.Config.Seed, runRec.Config.Prefix,
		len(runRec.History.Live), time.Since(start).Round(time.Millisecond))
	return report(o, o.reportDir, runRec.History, res)
}

// recheck checks a saved history.
func recheck(o options, path string) (violated bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	h, err := linearizability.ReadJSONL(f)
	if err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	res := linearizability.Check(h, linearizability.CheckOptions{Timeout: o.checkTimeout})
	fmt.Printf("dslincheck: %s\n", path)
	dir := ""
	if o.reportDir != "" {
		dir = filepath.Join(o.reportDir, strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)))
	}
	return report(o, dir, h, res)
}

// report prints the verdict and writes the report; violated is !res.OK().
func report(o options, dir string, h linearizability.History, res linearizability.Result) (bool, error) {
	fmt.Printf("  %s\n", res.Summary())
	for i, err := range res.Errors {
		if i == 20 {
			fmt.Printf("  ... %d more (see the report)\n", len(res.Errors)-i)
			break
		}
		fmt.Printf("  - %v\n", err)
	}
	if dir != "" {
		if err := linearizability.WriteReport(dir, h, res); err != nil {
			return !res.OK(), err
		}
		fmt.Printf("  report: %s\n", dir)
	}
	return !res.OK(), nil
}

// workloadExtensions are the extensions whose operations the workload knows.
var workloadExtensions = []string{linearizability.ExtBatch, linearizability.ExtSnapshot,
	linearizability.ExtBootstrap, linearizability.ExtRecords, linearizability.ExtFork}

// extensions resolves --extensions: a list as given (none: empty), or with auto the
// ones the server has, probed as dsconform's --extensions auto does (on the bucketed
// surface inside --bucket, created first). Only the workload's extensions are kept, in
// the order of workloadExtensions.
func extensions(o options, client *linearizability.HTTPClient) ([]string, error) {
	if o.base {
		return []string{}, nil
	}
	list, err := conformance.ParseExtensions(o.extensions)
	if err != nil {
		return nil, err
	}
	if list == nil {
		if err := client.Setup(); err != nil {
			return nil, fmt.Errorf("setup: %w", err)
		}
		cfg := conformance.Config{BaseURL: client.Base, Surface: conformance.Surface(o.surface),
			StreamPath: o.streamPath, CompatBucket: o.compat, NamePrefix: "lincheck-probe"}
		if o.surface == string(linearizability.SurfaceBucketed) {
			cfg.Bucket = o.bucket
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if list, err = conformance.DetectExtensions(ctx, cfg); err != nil {
			return nil, fmt.Errorf("probing the server's extensions (or pass --extensions): %w", err)
		}
	}
	out := []string{}
	for _, e := range workloadExtensions {
		if slices.Contains(list, e) {
			out = append(out, e)
		}
	}
	return out, nil
}

func extList(exts []string) string {
	if len(exts) == 0 {
		return "none"
	}
	return strings.Join(exts, ",")
}
