// Command dsd serves the Durable Streams protocol and its extensions over HTTP, durably,
// from one data file (engine/boltstore).
//
//	dsd [--addr 127.0.0.1:4437] [--data-dir ./data] [--long-poll-timeout 20s]
//	    [--sse-max-age 60s] [--compat-bucket default] [--max-body 33554432]
//	    [--auth-tokens FILE] [--cache-private]
//
// On SIGTERM or SIGINT it stops accepting connections, lets requests in flight finish
// (live reads are ended), commits what is queued and closes the data file.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/dsd-project/dsd/httpd"
)

type options struct {
	addr, dataDir, compatBucket, authFile string
	longPoll, sseMaxAge                   time.Duration
	maxBody                               int64
	unsafeNoSync, cachePrivate            bool
	cpuProfile                            string
	cluster                               clusterOptions
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("dsd", flag.ContinueOnError)
	fs.StringVar(&o.addr, "addr", "127.0.0.1:4437", "listen address (host:port; port 0 picks a free port)")
	fs.StringVar(&o.dataDir, "data-dir", "./data", "directory of the data file dsd.db (created if missing)")
	fs.DurationVar(&o.longPoll, "long-poll-timeout", 20*time.Second, "how long a long-poll waits for data before answering 204")
	fs.DurationVar(&o.sseMaxAge, "sse-max-age", 60*time.Second, "SSE responses end after this long; clients reconnect from the last offset")
	fs.StringVar(&o.compatBucket, "compat-bucket", "default", "bucket behind the flat /v1/stream/{name} surface; empty disables that surface")
	fs.Int64Var(&o.maxBody, "max-body", 32<<20, "largest accepted request body in bytes; larger bodies get 413")
	fs.StringVar(&o.authFile, "auth-tokens", "", "file of bearer tokens, one per line; when set, requests without a listed token get 401")
	fs.BoolVar(&o.cachePrivate, "cache-private", false, "mark cacheable reads Cache-Control: private (for private data behind shared caches); implied by --auth-tokens")
	fs.BoolVar(&o.unsafeNoSync, "unsafe-no-sync", false, "UNSAFE, tests only: skip fsync, so acknowledged data can be lost on a crash")
	fs.StringVar(&o.cpuProfile, "cpu-profile", "", "write a CPU profile to this file until shutdown (diagnostics)")
	clusterFlags(fs, &o.cluster)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: dsd [flags]\n\nServes Durable Streams (base protocol and extensions) from one data file (dsd.db).\n\nFlags:\n")
		fs.PrintDefaults()
	}
	return o, fs.Parse(args)
}

func main() {
	o, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		os.Exit(2)
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "dsd:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	tokens, err := readTokens(o.authFile)
	if err != nil {
		return err
	}
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return err
	}
	sv, err := openServed(o, ln.Addr().String())
	if err != nil {
		ln.Close()
		return err
	}
	h := httpd.New(sv.store, httpd.Config{
		LongPollTimeout: o.longPoll, SSEMaxAge: o.sseMaxAge, CompatBucket: o.compatBucket,
		MaxBody: o.maxBody, AuthTokens: tokens, CachePrivate: o.cachePrivate,
	})
	ctx, cancel := context.WithCancel(context.Background())
	srv := &http.Server{Handler: sv.wrap(h), ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout: 5 * time.Minute, IdleTimeout: 2 * time.Minute,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	log.SetFlags(0)
	log.Printf("dsd: listening on http://%s (data %s)", ln.Addr(), sv.path)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	select {
	case s := <-sig:
		log.Printf("dsd: %s: draining", s)
	case err := <-errc:
		cancel()
		sv.close()
		return err
	}
	cancel() // ends live reads
	h.Shutdown()
	shutCtx, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	if err := srv.Shutdown(shutCtx); err != nil {
		log.Printf("dsd: shutdown: %v", err)
	}
	if err := sv.close(); err != nil {
		return err
	}
	log.Printf("dsd: stopped")
	return nil
}

// readTokens reads bearer tokens, one per line; blank lines and # comments are skipped.
func readTokens(path string) ([]string, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("auth tokens: %w", err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if t := strings.TrimSpace(sc.Text()); t != "" && !strings.HasPrefix(t, "#") {
			out = append(out, t)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("auth tokens: %s lists no token", path)
	}
	return out, nil
}
