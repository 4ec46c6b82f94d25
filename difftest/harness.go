package difftest

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/engine/enginetest"
	"github.com/dsd-project/dsd/httpd"
	"github.com/dsd-project/dsd/model"
)

// ReadChunkBytes is the catch-up chunk size the harness configures on both sides: small,
// so that scripts exercise chunking.
const ReadChunkBytes = 24

// Harness is one engine (on a directory the caller owns, NoSync: durability is not
// under test), its HTTP handler, and the clock both run on. Many scripts share it, each
// in its own bucket namespace.
type Harness struct {
	Clock  *Clock
	Engine *engine.Engine
	HTTP   httpd.Store
	Model  model.Config
	h      *httpd.Handler
	n      atomic.Uint64
}

// OpenHarness opens an engine in dir, on the backend enginetest selects.
func OpenHarness(dir string) (*Harness, error) {
	clk := NewClock(DefaultStart())
	e, err := enginetest.Open(dir, engine.Options{NoSync: true, Clock: clk.Now,
		ReadChunkBytes: ReadChunkBytes, SweepInterval: time.Hour})
	if err != nil {
		return nil, err
	}
	store := httpd.EngineStore{Engine: e}
	return &Harness{Clock: clk, Engine: e, HTTP: store, Model: model.Config{ReadChunkBytes: ReadChunkBytes},
		h: httpd.New(store, httpd.Config{LongPollTimeout: 10 * time.Millisecond})}, nil
}

// Close closes the engine.
func (h *Harness) Close() error { return h.Engine.Close() }

// Check runs script against the model and both targets (the engine's Go API and the HTTP
// layer), each in a fresh namespace. It returns the first mismatch, or a *Tolerated
// when a known issue cut a run short.
// start is the clock at the first step: the GenConfig.Start the script was generated
// with (it holds absolute Expires-At times).
func (h *Harness) Check(script Script, start time.Time) error {
	n := h.n.Add(1)
	h.Clock.Set(start)
	if err := Run("engine", script, EngineTarget{E: h.Engine, Now: h.Clock.Now}, h.Clock, h.Model,
		fmt.Sprintf("e%d-", n)); err != nil {
		return err
	}
	h.Clock.Set(start)
	return Run("httpd", script, HTTPTarget{H: h.h}, h.Clock, h.Model, fmt.Sprintf("h%d-", n))
}

// CheckStrict is Check with no known issue excused: a regression test of a known issue
// fails until the issue is fixed. The first request after a tick always meets the
// unswept expiry state (see settleExpiry).
func (h *Harness) CheckStrict(script Script, start time.Time) error {
	n := h.n.Add(1)
	h.Clock.Set(start)
	if err := run("engine", script, EngineTarget{E: h.Engine, Now: h.Clock.Now}, h.Clock, h.Model,
		fmt.Sprintf("e%d-", n), runOpts{}); err != nil {
		return err
	}
	h.Clock.Set(start)
	return run("httpd", script, HTTPTarget{H: h.h}, h.Clock, h.Model, fmt.Sprintf("h%d-", n), runOpts{})
}
