package main

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/httpd"
	"github.com/dsd-project/dsd/ops"
)

// adminServer is the admin listener (D12), bound and serving before the data file is
// opened (/readyz answers 503 until then). A nil *adminServer is "turned off".
type adminServer struct {
	ln      net.Listener
	srv     *http.Server
	admin   *ops.Admin
	metrics *ops.Metrics
}

// startAdmin binds addr and serves the admin endpoints; "" turns the listener off (nil).
// A port in use is a start-up error naming the flag.
func startAdmin(addr string, guard func(*http.Request) bool) (*adminServer, error) {
	if addr == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("admin listener (--admin-addr %s): %w; pick another address, or --admin-addr \"\" to turn it off", addr, err)
	}
	a := &adminServer{ln: ln, metrics: ops.NewMetrics()}
	a.admin = ops.NewAdmin(a.metrics, guard)
	a.srv = &http.Server{Handler: a.admin, ReadHeaderTimeout: 10 * time.Second}
	go a.srv.Serve(httpd.JSONErrorListener(ln))
	return a, nil
}

// observer is the engine's metrics observer, nil when off.
func (a *adminServer) observer() engine.Observer {
	if a == nil {
		return nil
	}
	return a.metrics
}

func (a *adminServer) metricsOrNil() *ops.Metrics {
	if a == nil {
		return nil
	}
	return a.metrics
}

// ready marks the data file open and logs the admin address (after the main one: tools
// take the first "listening on" line for the main address).
func (a *adminServer) ready(eng *engine.Engine, log *slog.Logger) {
	if a == nil {
		return
	}
	a.admin.SetEngine(eng)
	log.Info(fmt.Sprintf("dsd: admin listening on http://%s", a.ln.Addr()))
}

// readyCluster makes /readyz follow a cluster node's readiness and logs the admin address.
func (a *adminServer) readyCluster(ready func() error, log *slog.Logger) {
	if a == nil || ready == nil {
		return
	}
	a.admin.SetReadiness(ready)
	log.Info(fmt.Sprintf("dsd: admin listening on http://%s", a.ln.Addr()))
}

func (a *adminServer) close() {
	if a != nil {
		a.srv.Close()
	}
}
