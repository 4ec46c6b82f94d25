package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/pprof"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/httpd"
	"github.com/dsd-project/dsd/ops"
)

// run serves until SIGTERM or SIGINT, logging through lg.
func run(o options, lg *logs) error {
	log := lg.log
	slog.SetDefault(log)
	sig := make(chan os.Signal, 1) // before anything: SIGHUP must never kill dsd
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	tokens, err := readTokens(o.authFile)
	if err != nil {
		return err
	}
	if err := checkPublicURL(o.publicURL); err != nil {
		return err
	}
	if o.cpuProfile != "" {
		stop, err := startCPUProfile(o.cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	var handler atomic.Pointer[httpd.Handler] // for the admin guard, once built
	adm, err := startAdmin(o.adminAddr, func(r *http.Request) bool {
		if h := handler.Load(); h != nil {
			return h.AdminAuthorized(r)
		}
		return tokens == nil
	})
	if err != nil {
		return err
	}
	defer adm.close()
	var public publicRoutes // what the console reads, once built
	adm.mountConsole(&public, tokens != nil)
	// The port is bound before the store opens: a node whose port is taken must fail before
	// it joins a cluster and claims partitions it could never serve.
	raw, err := net.Listen("tcp", o.addr)
	if err != nil {
		return err
	}
	sv, err := openServed(o, adm.observer())
	if err != nil {
		raw.Close()
		return err
	}
	h := httpd.New(sv.store, httpd.Config{
		LongPollTimeout: o.longPoll, SSEMaxAge: o.sseMaxAge, CompatBucket: o.compatBucket,
		MaxBody: o.maxBody, Tokens: tokens, CachePrivate: o.cachePrivate,
		BodyBudget: o.bodyBudget, BodyIdleTimeout: o.bodyIdle, LiveBufferBudget: o.liveBudget,
		Subscriptions: sv.subs, Webhooks: o.webhooks, WebhookAllowLoopback: o.webhookLoopback,
		PublicURL: o.publicURL,
	})
	handler.Store(h)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := ops.Observe(sv.wrap(h), lg.requests, adm.metricsOrNil())
	public.set(h, served)
	srv, ln, certs, err := listen(ctx, o, served, log, raw)
	if err != nil {
		raw.Close()
		sv.close()
		return err
	}
	log.Info(fmt.Sprintf("dsd: listening on %s://%s", scheme(certs), ln.Addr()), "data", sv.path, "h2c", o.h2c)
	if sv.eng != nil {
		adm.ready(sv.eng, log)
	} else {
		adm.readyCluster(sv.ready, log)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	rl := reloader{log: log, flush: lg.Flush, certs: certs, tokensFile: o.authFile, h: h}
	if err := waitForStop(log, sig, errc, rl.reload); err != nil {
		cancel()
		sv.close()
		return err
	}
	cancel() // ends live reads
	h.Shutdown()
	shutCtx, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	if err := srv.Shutdown(shutCtx); err != nil && !errors.Is(err, context.Canceled) {
		log.Warn("dsd: shutdown", "err", err)
	}
	if err := sv.close(); err != nil {
		return err
	}
	log.Info("dsd: stopped")
	return nil
}

// openEngine opens the data file and creates the compat bucket.
func openEngine(o options, obs engine.Observer) (*engine.Engine, error) {
	eng, err := engine.Open(o.dataDir, engine.Options{NoSync: o.unsafeNoSync, Observer: obs, LoadedStreams: o.loadedStreams})
	if err != nil {
		return nil, err
	}
	if o.compatBucket != "" {
		if _, err := eng.CreateBucket(o.compatBucket); err != nil {
			eng.Close()
			return nil, fmt.Errorf("compat bucket %q: %w", o.compatBucket, err)
		}
	}
	return eng, nil
}

// listen builds the main server on the bound listener ln (wrapped in TLS with --tls-cert).
func listen(ctx context.Context, o options, h http.Handler, log *slog.Logger, ln net.Listener) (*http.Server, net.Listener, *certSource, error) {
	var certs *certSource
	if o.tlsCert != "" {
		var err error
		if certs, err = newCertSource(o.tlsCert, o.tlsKey); err != nil {
			return nil, nil, nil, err
		}
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout: 5 * time.Minute, IdleTimeout: 2 * time.Minute,
		BaseContext: func(net.Listener) context.Context { return ctx },
		ConnContext: httpd.ConnContext,
		ErrorLog:    slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		Protocols:   protocols(certs != nil, o.h2c)}
	if certs != nil {
		srv.TLSConfig = certs.tlsConfig()
		ln = tls.NewListener(ln, srv.TLSConfig)
	} else {
		ln = httpd.JSONErrorListener(ln) // net/http's own 400s get the JSON error body too
	}
	return srv, ln, certs, nil
}

func scheme(certs *certSource) string {
	if certs != nil {
		return "https"
	}
	return "http"
}

// startCPUProfile profiles into path until the returned stop.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// waitForStop returns nil on SIGTERM or SIGINT, or the error that ended the server;
// SIGHUP reloads.
func waitForStop(log *slog.Logger, sig <-chan os.Signal, errc <-chan error, reload func()) error {
	for {
		select {
		case s := <-sig:
			if s == syscall.SIGHUP {
				reload()
				continue
			}
			log.Info("dsd: draining", "signal", s.String())
			return nil
		case err := <-errc:
			return err
		}
	}
}

// reloader re-reads what SIGHUP reloads: the TLS key pair and the token file. A failure
// is logged and the previous state kept; live reads and requests in flight continue.
type reloader struct {
	log        *slog.Logger
	flush      func() // the buffered request lines
	certs      *certSource
	tokensFile string
	h          *httpd.Handler
}

func (rl reloader) reload() {
	rl.flush()
	if rl.certs != nil {
		if err := rl.certs.reload(); err != nil {
			rl.log.Error("dsd: SIGHUP: keeping the previous certificate", "err", err)
		} else {
			rl.log.Info("dsd: SIGHUP: TLS certificate reloaded", "cert", rl.certs.certFile)
		}
	}
	if rl.tokensFile != "" {
		if ts, err := readTokens(rl.tokensFile); err != nil {
			rl.log.Error("dsd: SIGHUP: keeping the previous tokens", "err", err)
		} else {
			rl.h.SetTokens(ts)
			rl.log.Info("dsd: SIGHUP: auth tokens reloaded", "file", rl.tokensFile)
		}
	}
}
