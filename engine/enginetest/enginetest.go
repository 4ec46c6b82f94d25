// Package enginetest opens engines for tests on the backend named by $DSD_TEST_BACKEND:
// "file" (default: engine/boltstore, the data file) or "memory" (engine/memstore), so
// that the engine's, difftest's and the linearizability checker's tests run on both.
package enginetest

import (
	"fmt"
	"os"
	"sync"

	"github.com/dsd-project/dsd/engine"
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
	default:
		return nil, fmt.Errorf("enginetest: %s=%q: want file or memory", Env, b)
	}
}
