package engine

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/dsd-project/dsd/engine/memstore"
	"github.com/dsd-project/dsd/engine/storage"
	"github.com/dsd-project/dsd/model"
)

type recordingObserver struct {
	mu     sync.Mutex
	groups []int
	errs   int
}

func (o *recordingObserver) Committed(ops int, d time.Duration, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if err != nil {
		o.errs++
		return
	}
	if d <= 0 {
		panic("commit duration not measured")
	}
	o.groups = append(o.groups, ops)
}

// The observer sees every commit group, its size and a store failure; Ready reports the
// engine's state. Spec: D12 (metrics, /readyz).
func TestObserverAndReadiness(t *testing.T) {
	obs := &recordingObserver{}
	mem := memstore.New()
	e, err := OpenBackend(mem, Options{NoSync: true, SweepInterval: time.Hour, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.CreateBucket("test"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Create(key("x"), CreateRequest{ContentType: "text/plain", MediaType: "text/plain"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Append(key("x"), AppendRequest{MediaType: "text/plain", Body: []byte("a")}); err != nil {
		t.Fatal(err)
	}
	obs.mu.Lock()
	total := 0
	for _, n := range obs.groups {
		total += n
	}
	obs.mu.Unlock()
	if total < 3 || obs.errs != 0 {
		t.Fatalf("observed %v (%d errors), want 3 ops in all", obs.groups, obs.errs)
	}
	if err := e.Ready(); err != nil {
		t.Fatalf("ready: %v", err)
	}
	if _, _, err := e.Counts(); !errors.Is(err, ErrNotSupported) {
		t.Fatalf("counts on the memory store: %v", err)
	}
	mem.SetFault(func(string, *storage.Change) error { return errors.New("disk on fire") })
	e.Append(key("x"), AppendRequest{MediaType: "text/plain", Body: []byte("b")})
	obs.mu.Lock()
	errs := obs.errs
	obs.mu.Unlock()
	if errs != 1 || !errors.Is(e.Ready(), model.ErrStorageFailed) {
		t.Fatalf("after a failed commit: %d errors observed, ready %v", errs, e.Ready())
	}
}
