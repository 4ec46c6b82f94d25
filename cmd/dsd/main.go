// Command dsd serves the Durable Streams protocol and its extensions over HTTP, durably,
// from one data file (engine/boltstore).
//
//	dsd [flags]                 serve (dsd --help lists the flags)
//	dsd --version               print the module version and VCS revision
//	dsd check FILE              verify a data file (exit 1 on damage)
//	dsd backup --from ADMIN_URL --out FILE
//	                            copy a running server's data file (its admin /backup)
//
// On SIGTERM or SIGINT it stops accepting connections, lets requests in flight finish
// (live reads are ended), commits what is queued and closes the data file. On SIGHUP it
// reloads the --auth-tokens file and the --tls-cert/--tls-key pair.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

type options struct {
	addr, dataDir, compatBucket, authFile string
	adminAddr                             string
	longPoll, sseMaxAge                   time.Duration
	maxBody, bodyBudget, liveBudget       int64
	loadedStreams                         int
	bodyIdle                              time.Duration
	unsafeNoSync, cachePrivate            bool
	cpuProfile                            string
	logFormat, logLevel                   string
	logRequests, version                  bool
	tlsCert, tlsKey                       string
	h2c                                   bool
	webhooks, webhookLoopback             bool
	publicURL                             string
	cluster                               clusterOptions
}

const usageHead = `Usage: dsd [flags]
       dsd check FILE
       dsd backup --from ADMIN_URL --out FILE [--token-file FILE]

Serves Durable Streams (base protocol and extensions) from one data file (dsd.db).

Examples:
  dsd --addr 127.0.0.1:4437 --data-dir /var/lib/dsd
  dsd --addr 127.0.0.1:0 --admin-addr 127.0.0.1:0 --log-format json   # free ports, JSON logs
  dsd --addr :8443 --tls-cert cert.pem --tls-key key.pem --auth-tokens tokens.txt
  dsd --h2c --log-requests=false --log-level warn    # HTTP/2 cleartext behind a proxy
  dsd --version
  dsd backup --from http://127.0.0.1:9437 --out copy.db && dsd check copy.db

Flags:
`

func parseFlags(args []string) (options, *flag.FlagSet, error) {
	var o options
	fs := flag.NewFlagSet("dsd", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported by main; --help prints to stdout
	fs.StringVar(&o.addr, "addr", "127.0.0.1:4437", "listen address (host:port; port 0 picks a free port)")
	fs.StringVar(&o.dataDir, "data-dir", "./data", "directory of the data file dsd.db (created if missing)")
	fs.DurationVar(&o.longPoll, "long-poll-timeout", 20*time.Second, "how long a long-poll waits for data before answering 204")
	fs.DurationVar(&o.sseMaxAge, "sse-max-age", 60*time.Second, "SSE responses end after this long; clients reconnect from the last offset")
	fs.StringVar(&o.compatBucket, "compat-bucket", "default", "bucket behind the flat /v1/stream/{name} surface; empty disables that surface")
	fs.Int64Var(&o.maxBody, "max-body", 32<<20, "largest accepted request body in bytes; larger bodies get 413")
	fs.Int64Var(&o.bodyBudget, "body-budget", 48<<20, "bytes of request bodies held at once over all requests (at least --max-body); past it 503 SERVER_BUSY with Retry-After; -1: no bound")
	fs.IntVar(&o.loadedStreams, "max-loaded-streams", 200000, "streams kept loaded in memory; past it the least recently used idle ones are unloaded and reload from the data file on next use; -1: no bound")
	fs.DurationVar(&o.bodyIdle, "body-idle-timeout", 10*time.Second, "a request body that sends no byte for this long gets 408 BODY_TIMEOUT")
	fs.Int64Var(&o.liveBudget, "live-buffer-budget", 64<<20, "bytes held at once for readers whose sockets do not take them; past it the readers blocked longest are cut; -1: no bound")
	fs.StringVar(&o.authFile, "auth-tokens", "", "file of bearer tokens, lines \"TOKEN [scope ...]\" with scopes read:BUCKET, write:BUCKET (* = every bucket) or admin, none = everything; without a listed token 401, without the scope 403 (reloaded on SIGHUP)")
	fs.BoolVar(&o.cachePrivate, "cache-private", false, "mark cacheable reads Cache-Control: private (for private data behind shared caches); implied by --auth-tokens")
	fs.BoolVar(&o.webhooks, "webhooks", false, "allow webhook subscriptions (pull-wake subscriptions are always on)")
	fs.BoolVar(&o.webhookLoopback, "webhook-allow-loopback", false, "development only: accept http(s) webhook URLs to localhost, 127.0.0.0/8 and [::1]")
	fs.StringVar(&o.publicURL, "public-url", "", "origin of absolute URLs in subscription documents and webhooks (e.g. https://streams.example.com); default: the request's")
	fs.StringVar(&o.adminAddr, "admin-addr", "127.0.0.1:9437", "admin listener (/metrics, /healthz, /readyz, /debug/pprof/, /backup, the console at /console/); empty turns it off; port 0 picks a free port")
	fs.StringVar(&o.logFormat, "log-format", "text", "log format: text or json (log/slog, on stderr)")
	fs.StringVar(&o.logLevel, "log-level", "info", "least severe level logged: debug, info, warn or error")
	fs.BoolVar(&o.logRequests, "log-requests", true, "log one line per request at info (live reads when they end)")
	fs.StringVar(&o.tlsCert, "tls-cert", "", "PEM certificate (chain) file: serve HTTPS, HTTP/2 by ALPN; needs --tls-key; reloaded on SIGHUP")
	fs.StringVar(&o.tlsKey, "tls-key", "", "PEM private key file of --tls-cert")
	fs.BoolVar(&o.h2c, "h2c", false, "also serve HTTP/2 without TLS (prior knowledge, e.g. behind a proxy that speaks h2c)")
	fs.BoolVar(&o.version, "version", false, "print the version and VCS revision, then exit")
	fs.BoolVar(&o.unsafeNoSync, "unsafe-no-sync", false, "UNSAFE, tests only: skip fsync, so acknowledged data can be lost on a crash")
	fs.StringVar(&o.cpuProfile, "cpu-profile", "", "write a CPU profile to this file until shutdown (diagnostics)")
	clusterFlags(fs, &o.cluster)
	if err := fs.Parse(args); err != nil {
		return o, fs, err
	}
	switch {
	case fs.NArg() > 0:
		return o, fs, fmt.Errorf("unexpected argument %q: dsd takes flags, or a command (check, backup) first (see dsd --help)", fs.Arg(0))
	case (o.tlsCert == "") != (o.tlsKey == ""):
		return o, fs, errors.New("--tls-cert and --tls-key go together")
	case o.h2c && o.tlsCert != "":
		return o, fs, errors.New("--h2c is HTTP/2 on plain TCP; with --tls-cert, HTTP/2 is negotiated by TLS")
	}
	return o, fs, checkBounds(o)
}

// checkBounds refuses sizes and durations that would make every request fail (a body
// limit below 1 byte, a long-poll or SSE response that ends at once) or that mean
// nothing (budgets below -1).
func checkBounds(o options) error {
	switch {
	case o.maxBody < 1:
		return fmt.Errorf("--max-body %d: want at least 1 (bytes)", o.maxBody)
	case o.bodyBudget < -1 || o.bodyBudget == 0:
		return fmt.Errorf("--body-budget %d: want bytes (at least 1) or -1 for no bound", o.bodyBudget)
	case o.liveBudget < -1 || o.liveBudget == 0:
		return fmt.Errorf("--live-buffer-budget %d: want bytes (at least 1) or -1 for no bound", o.liveBudget)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"--long-poll-timeout", o.longPoll}, {"--sse-max-age", o.sseMaxAge}, {"--body-idle-timeout", o.bodyIdle}} {
		if d.v <= 0 {
			return fmt.Errorf("%s %s: want a positive duration such as 10s", d.name, d.v)
		}
	}
	return nil
}

func main() { os.Exit(dsdMain(os.Args[1:], os.Stdout, os.Stderr)) }

// dsdMain runs dsd with args and returns the exit status: 0, 1 on a failure, 2 on bad
// usage.
func dsdMain(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "check":
			return checkMain(args[1:], stdout, stderr)
		case "backup":
			return backupMain(args[1:], stdout, stderr)
		}
	}
	o, fs, err := parseFlags(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, usageHead)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return 0
	case err != nil:
		fmt.Fprintf(stderr, "dsd: %s\nRun 'dsd --help' for usage.\n", strings.TrimSpace(err.Error()))
		return 2
	case o.version:
		fmt.Fprintln(stdout, versionString())
		return 0
	}
	log, err := newLogger(o.logFormat, o.logLevel, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "dsd: %s\nRun 'dsd --help' for usage.\n", err)
		return 2
	}
	if err := run(o, log); err != nil {
		fmt.Fprintln(stderr, "dsd:", err)
		return 1
	}
	return 0
}
