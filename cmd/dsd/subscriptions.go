package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/subs"
)

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
		slog.Warn("dsd: stopping subscriptions", "err", err)
	}
}
