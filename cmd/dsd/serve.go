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

// run serves until SIGTERM or SIGINT, logging through log.
func run(o options, log *slog.Logger) error {
	slog.SetDefault(log)
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
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var handler atomic.Pointer[httpd.Handler] // for the admin guard, once built
	var public publicRoutes                   // for the console, once built
	var metrics *ops.Metrics
	var admin *ops.Admin
	var adminLn net.Listener
	if o.adminAddr != "" {
		if adminLn, err = net.Listen("tcp", o.adminAddr); err != nil {
			return fmt.Errorf("admin listener (--admin-addr %s): %w; pick another address, or --admin-addr \"\" to turn it off", o.adminAddr, err)
		}
		metrics = ops.NewMetrics()
		admin = ops.NewAdmin(metrics, func(r *http.Request) bool {
			if h := handler.Load(); h != nil {
				return h.AdminAuthorized(r)
			}
			return tokens == nil
		})
		mountConsole(admin, &public, tokens != nil)
		adminSrv := &http.Server{Handler: admin, ReadHeaderTimeout: 10 * time.Second,
			BaseContext: func(net.Listener) context.Context { return ctx }} // console live reads end at shutdown
		go adminSrv.Serve(adminLn)
		defer adminSrv.Close()
	}
	eopts := engine.Options{NoSync: o.unsafeNoSync}
	if metrics != nil {
		eopts.Observer = metrics
	}
	eng, err := engine.Open(o.dataDir, eopts)
	if err != nil {
		return err
	}
	if o.compatBucket != "" {
		if _, err := eng.CreateBucket(o.compatBucket); err != nil {
			eng.Close()
			return fmt.Errorf("compat bucket %q: %w", o.compatBucket, err)
		}
	}
	h := httpd.New(httpd.EngineStore{Engine: eng}, httpd.Config{
		LongPollTimeout: o.longPoll, SSEMaxAge: o.sseMaxAge, CompatBucket: o.compatBucket,
		MaxBody: o.maxBody, Tokens: tokens, CachePrivate: o.cachePrivate,
	})
	handler.Store(h)
	var certs *certSource
	if o.tlsCert != "" {
		if certs, err = newCertSource(o.tlsCert, o.tlsKey); err != nil {
			eng.Close()
			return err
		}
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		eng.Close()
		return err
	}
	var reqLog *slog.Logger
	if o.logRequests {
		reqLog = log
	}
	served := ops.Observe(h, reqLog, metrics)
	public.set(h, served)
	srv := &http.Server{Handler: served, ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout: 5 * time.Minute, IdleTimeout: 2 * time.Minute,
		BaseContext: func(net.Listener) context.Context { return ctx },
		ErrorLog:    slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		Protocols:   protocols(certs != nil, o.h2c)}
	scheme := "http"
	if certs != nil {
		srv.TLSConfig = certs.tlsConfig()
		ln = tls.NewListener(ln, srv.TLSConfig)
		scheme = "https"
	}
	log.Info(fmt.Sprintf("dsd: listening on %s://%s", scheme, ln.Addr()), "data", eng.Path(), "h2c", o.h2c)
	if admin != nil {
		admin.SetEngine(eng)
		log.Info(fmt.Sprintf("dsd: admin listening on http://%s", adminLn.Addr()))
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	rl := reloader{log: log, certs: certs, tokensFile: o.authFile, h: h}
	if err := waitForStop(log, sig, errc, rl.reload); err != nil {
		cancel()
		eng.Close()
		return err
	}
	cancel() // ends live reads
	h.Shutdown()
	shutCtx, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	if err := srv.Shutdown(shutCtx); err != nil && !errors.Is(err, context.Canceled) {
		log.Warn("dsd: shutdown", "err", err)
	}
	if err := eng.Close(); err != nil {
		return err
	}
	log.Info("dsd: stopped")
	return nil
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
	certs      *certSource
	tokensFile string
	h          *httpd.Handler
}

func (rl reloader) reload() {
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
