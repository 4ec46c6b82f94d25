// Command dsd serves the Durable Streams protocol and its extensions over HTTP, durably,
// from one data file (engine/boltstore).
//
//	dsd [--addr 127.0.0.1:4437] [--data-dir ./data] [--long-poll-timeout 20s]
//	    [--sse-max-age 60s] [--compat-bucket default] [--max-body 33554432]
//	    [--auth-tokens FILE] [--cache-private] [--body-budget 50331648]
//	    [--body-idle-timeout 10s] [--live-buffer-budget 67108864]
//	    [--webhooks] [--webhook-allow-loopback] [--public-url URL]
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
	"net/url"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/httpd"
	"github.com/dsd-project/dsd/subs"
)

type options struct {
	addr, dataDir, compatBucket, authFile string
	longPoll, sseMaxAge                   time.Duration
	maxBody, bodyBudget, liveBudget       int64
	bodyIdle                              time.Duration
	unsafeNoSync, cachePrivate            bool
	cpuProfile                            string
	webhooks, webhookLoopback             bool
	publicURL                             string
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
	fs.Int64Var(&o.bodyBudget, "body-budget", 48<<20, "bytes of request bodies held at once over all requests (at least --max-body); past it 503 SERVER_BUSY with Retry-After; -1: no bound")
	fs.DurationVar(&o.bodyIdle, "body-idle-timeout", 10*time.Second, "a request body that sends no byte for this long gets 408 BODY_TIMEOUT")
	fs.Int64Var(&o.liveBudget, "live-buffer-budget", 64<<20, "bytes held at once for readers whose sockets do not take them; past it the readers blocked longest are cut; -1: no bound")
	fs.StringVar(&o.authFile, "auth-tokens", "", "file of bearer tokens, one per line; when set, requests without a listed token get 401")
	fs.BoolVar(&o.cachePrivate, "cache-private", false, "mark cacheable reads Cache-Control: private (for private data behind shared caches); implied by --auth-tokens")
	fs.BoolVar(&o.webhooks, "webhooks", false, "allow webhook subscriptions (pull-wake subscriptions are always on)")
	fs.BoolVar(&o.webhookLoopback, "webhook-allow-loopback", false, "development only: accept http(s) webhook URLs to localhost, 127.0.0.0/8 and [::1]")
	fs.StringVar(&o.publicURL, "public-url", "", "origin of absolute URLs in subscription documents and webhooks (e.g. https://streams.example.com); default: the request's")
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
	if err := checkPublicURL(o.publicURL); err != nil {
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
		BodyBudget: o.bodyBudget, BodyIdleTimeout: o.bodyIdle, LiveBufferBudget: o.liveBudget,
		Subscriptions: sv.subs, Webhooks: o.webhooks, WebhookAllowLoopback: o.webhookLoopback,
		PublicURL: o.publicURL,
	})
	ctx, cancel := context.WithCancel(context.Background())
	srv := &http.Server{Handler: sv.wrap(h), ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout: 5 * time.Minute, IdleTimeout: 2 * time.Minute,
		BaseContext: func(net.Listener) context.Context { return ctx },
		ConnContext: httpd.ConnContext}
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

// checkPublicURL accepts "" or an http(s) origin without path, query or userinfo.
func checkPublicURL(raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("--public-url %q: want an origin such as https://streams.example.com", raw)
	}
	return nil
}

// startWorker starts the subscription delivery worker over the engine (D10): it loads or
// creates the signing keys, derives pending work from the stored subscriptions, and hears
// of every committed stream change.
func startWorker(eng *engine.Engine, o options) (*subs.Worker, error) {
	w, err := subs.New(subs.Options{Store: eng, AllowLoopback: o.webhookLoopback})
	if err != nil {
		return nil, err
	}
	eng.SetStreamObserver(w.StreamChanged)
	if err := w.Start(context.Background()); err != nil {
		return nil, fmt.Errorf("subscriptions: %w", err)
	}
	return w, nil
}

// stopWorker stops issuing wakes and waits up to 5 s for webhook attempts in flight.
func stopWorker(w *subs.Worker) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := w.Stop(ctx); err != nil {
		log.Printf("dsd: stopping subscriptions: %v", err)
	}
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
