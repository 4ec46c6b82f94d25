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
	var metrics *ops.Metrics
	var admin *ops.Admin
	var adminLn net.Listener
	if o.adminAddr != "" {
		if adminLn, err = net.Listen("tcp", o.adminAddr); err != nil {
			return fmt.Errorf("admin listener (--admin-addr %s): %w; pick another address, or --admin-addr \"\" to turn it off", o.adminAddr, err)
		}
		metrics = ops.NewMetrics()
		admin = ops.NewAdmin(metrics)
		adminSrv := &http.Server{Handler: admin, ReadHeaderTimeout: 10 * time.Second}
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
		MaxBody: o.maxBody, AuthTokens: tokens, CachePrivate: o.cachePrivate,
	})
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
	srv := &http.Server{Handler: ops.Observe(h, reqLog, metrics), ReadHeaderTimeout: 10 * time.Second,
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
	if err := waitForStop(log, sig, errc, certs); err != nil {
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
func waitForStop(log *slog.Logger, sig <-chan os.Signal, errc <-chan error, certs *certSource) error {
	for {
		select {
		case s := <-sig:
			if s == syscall.SIGHUP {
				reload(log, certs)
				continue
			}
			log.Info("dsd: draining", "signal", s.String())
			return nil
		case err := <-errc:
			return err
		}
	}
}

// reload re-reads what SIGHUP reloads: the TLS key pair. A failure is logged and the
// previous state kept.
func reload(log *slog.Logger, certs *certSource) {
	if certs != nil {
		if err := certs.reload(); err != nil {
			log.Error("dsd: SIGHUP: keeping the previous certificate", "err", err)
		} else {
			log.Info("dsd: SIGHUP: TLS certificate reloaded", "cert", certs.certFile)
		}
	}
}
