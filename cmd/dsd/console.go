package main

import (
	"net/http"
	"sync/atomic"

	"github.com/dsd-project/dsd/console"
	"github.com/dsd-project/dsd/httpd"
)

// publicRoutes holds what the console reads once the data file is open: the protocol
// handler (for its tokens) and the handler the public listener serves (logged, measured).
type publicRoutes struct {
	h      atomic.Pointer[httpd.Handler]
	served atomic.Pointer[http.Handler]
}

// set publishes the public handlers (after the engine is open).
func (p *publicRoutes) set(h *httpd.Handler, served http.Handler) {
	p.h.Store(h)
	p.served.Store(&served)
}

// mountConsole adds the console to the admin listener, when on (D12): GET /buckets, GET
// /lineage/{bucket}/{stream} and /console/ (its API mount is the public handler itself,
// read-only). Before the data file is open the API answers 503 and, with tokens
// configured, every request is refused.
func (a *adminServer) mountConsole(p *publicRoutes, tokens bool) {
	if a == nil {
		return
	}
	admin := a.admin
	access := func(r *http.Request) (func(string) bool, bool) {
		if h := p.h.Load(); h != nil {
			return h.ReadAccess(r)
		}
		return func(string) bool { return true }, !tokens
	}
	admin.HandleBuckets(access)
	admin.HandleLineage(access)
	admin.Mount("/console/", console.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s := p.served.Load(); s != nil {
			(*s).ServeHTTP(w, r)
			return
		}
		w.Header().Set("Retry-After", "1")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"error":{"code":"STARTING","message":"the data file is being opened; retry"}}` + "\n"))
	})))
}
