package ops

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"strconv"
	"sync/atomic"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/model"
)

// Admin is the admin listener's handler (D12): /metrics, /healthz, /readyz, /debug/pprof/
// and /backup. It answers before the engine is open (/healthz 200, /readyz 503), so that a
// supervisor can tell a process that is recovering from one that is down.
type Admin struct {
	metrics *Metrics
	guard   func(*http.Request) bool
	eng     atomic.Pointer[engine.Engine]
	ready   atomic.Pointer[func() error] // set on a cluster node (SetReadiness)
	mux     *http.ServeMux
}

// NewAdmin returns the admin handler over m (nil: /metrics answers 404). guard admits
// requests to the endpoints that expose data or the process (/backup, /debug/pprof/);
// nil admits every request. /metrics, /healthz and /readyz are open (scrapers, probes).
func NewAdmin(m *Metrics, guard func(*http.Request) bool) *Admin {
	a := &Admin{metrics: m, guard: guard, mux: http.NewServeMux()}
	if m != nil {
		a.mux.Handle("GET /metrics", m.Handler())
	}
	a.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeStatus(w, http.StatusOK, "ok", "")
	})
	a.mux.HandleFunc("GET /readyz", a.readyz)
	a.mux.HandleFunc("GET /backup", a.guarded(a.backup))
	a.mux.HandleFunc("/debug/pprof/", a.guarded(pprof.Index))
	a.mux.HandleFunc("/debug/pprof/cmdline", a.guarded(pprof.Cmdline))
	a.mux.HandleFunc("/debug/pprof/profile", a.guarded(pprof.Profile))
	a.mux.HandleFunc("/debug/pprof/symbol", a.guarded(pprof.Symbol))
	a.mux.HandleFunc("/debug/pprof/trace", a.guarded(pprof.Trace))
	return a
}

// guarded answers 401 unless the guard admits the request.
func (a *Admin) guarded(fn http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if a.guard != nil && !a.guard(r) {
			refuse(w, r, detailed(model.ErrUnauthorized, "a bearer token with the admin scope is required (Authorization: Bearer TOKEN)"))
			return
		}
		fn(w, r)
	}
}

// SetEngine marks the data file open (recovery done): /readyz then reports its state.
func (a *Admin) SetEngine(e *engine.Engine) {
	a.eng.Store(e)
	if a.metrics != nil {
		a.metrics.SetEngine(e)
	}
}

// ServeHTTP serves the admin routes; every 4xx carries the D7 JSON error body (jsonErrors).
func (a *Admin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	jw := &jsonErrors{ResponseWriter: w, r: r}
	a.mux.ServeHTTP(jw, r)
	jw.finish()
}

// SetReadiness makes /readyz answer from ready instead of an engine (a cluster node:
// every partition owned here or reachable, D12); a nil error is ready.
func (a *Admin) SetReadiness(ready func() error) { a.ready.Store(&ready) }

// readyz answers 200 when the data file is open and writable (or, on a cluster node, the
// readiness set by SetReadiness holds), else 503 with the reason and Retry-After.
func (a *Admin) readyz(w http.ResponseWriter, r *http.Request) {
	if f := a.ready.Load(); f != nil {
		if err := (*f)(); err != nil {
			writeStatus(w, http.StatusServiceUnavailable, "not_ready", err.Error())
			return
		}
		writeStatus(w, http.StatusOK, "ready", "")
		return
	}
	e := a.eng.Load()
	if e == nil {
		writeStatus(w, http.StatusServiceUnavailable, "starting", "the data file is being opened")
		return
	}
	if err := e.Ready(); err != nil {
		writeStatus(w, http.StatusServiceUnavailable, "not_ready", err.Error())
		return
	}
	writeStatus(w, http.StatusOK, "ready", "")
}

// writeStatus writes {"status": status, "reason": reason} (reason omitted when empty).
func writeStatus(w http.ResponseWriter, code int, status, reason string) {
	body := map[string]string{"status": status}
	if reason != "" {
		body["reason"] = reason
	}
	b, _ := json.Marshal(body)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if code == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	w.WriteHeader(code)
	_, _ = w.Write(append(b, '\n'))
}

// backup streams a consistent copy of the data file (engine.Backup): Content-Length is
// the copy's size, so a cut transfer shows as short.
func (a *Admin) backup(w http.ResponseWriter, r *http.Request) {
	e := a.eng.Load()
	if e == nil {
		writeStatus(w, http.StatusServiceUnavailable, "starting", "the data file is being opened")
		return
	}
	started := false
	_, err := e.Backup(w, func(size int64) {
		hd := w.Header()
		hd.Set("Content-Type", "application/octet-stream")
		hd.Set("Content-Disposition", `attachment; filename="dsd.db"`)
		hd.Set("Content-Length", strconv.FormatInt(size, 10))
		hd.Set("Cache-Control", "no-store")
		started = true
	})
	if err != nil && !started {
		writeStatus(w, http.StatusServiceUnavailable, "backup_failed", err.Error())
		return
	}
	if err != nil {
		slog.Warn("backup: the copy was cut", "err", err)
		panic(http.ErrAbortHandler) // a short copy must not look complete
	}
}
