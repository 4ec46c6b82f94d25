// Package enginetest opens engines for tests on the backend named by $DSD_TEST_BACKEND:
// "file" (default: engine/boltstore, the data file), "memory" (engine/memstore) or
// "jetstream" (engine/jsstore on a 3-node in-process cluster shared by the test binary,
// jstest.GetShared), so that the engine's, difftest's and the linearizability checker's
// tests run on each.
package enginetest

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/engine/jsstore"
	"github.com/dsd-project/dsd/engine/jsstore/jstest"
	"github.com/dsd-project/dsd/engine/memstore"
)

// Env is the variable that selects the backend.
const Env = "DSD_TEST_BACKEND"

// Backend returns the selected backend's name: "file" or "memory".
func Backend() string {
	if v := os.Getenv(Env); v != "" {
		return v
	}
	return "file"
}

var (
	mu     sync.Mutex
	stores = map[string]*memstore.Store{} // by dir: reopening a dir restarts its store
)

// Open opens an engine over dir on the selected backend. On "memory", dir only names the
// store: opening the same dir again after Close is a restart.
// Errors: engine.Open's, an unknown backend name.
func Open(dir string, opts engine.Options) (*engine.Engine, error) {
	switch b := Backend(); b {
	case "file":
		return engine.Open(dir, opts)
	case "memory":
		mu.Lock()
		st, ok := stores[dir]
		if ok {
			st = st.Reopen()
		} else {
			st = memstore.New()
		}
		stores[dir] = st
		mu.Unlock()
		return engine.OpenBackend(st, opts)
	case "jetstream":
		st, err := OpenJetStream(dir)
		if err != nil {
			return nil, err
		}
		return engine.OpenBackend(st, opts)
	default:
		return nil, fmt.Errorf("enginetest: %s=%q: want file, memory or jetstream", Env, b)
	}
}

// OpenJetStream opens a jsstore (2 partitions, R3) for dir on the shared test cluster;
// opening the same dir again is a restart.
func OpenJetStream(dir string) (*jsstore.Store, error) {
	sh, err := jstest.GetShared()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return jsstore.Open(ctx, sh.Conn, jsstore.Options{Partitions: 2, Prefix: jstest.Prefix(dir), Servers: sh.Servers})
}
