package memstore_test

import (
	"errors"
	"testing"

	"github.com/dsd-project/dsd/engine/memstore"
	"github.com/dsd-project/dsd/engine/storage"
	"github.com/dsd-project/dsd/engine/storage/storagetest"
)

// The storage contract in memory. Spec: DESIGN.md D4, D11.
func TestContract(t *testing.T) {
	storagetest.Run(t, storagetest.Harness{
		New: func(t *testing.T) func() storage.Backend {
			st := memstore.New()
			first := true
			return func() storage.Backend {
				if first {
					first = false
					return st
				}
				return st.Reopen()
			}
		},
		FailCommits: func(b storage.Backend, on bool) {
			var f memstore.Fault
			if on {
				f = func(string, *storage.Change) error { return errors.New("injected failure") }
			}
			b.(*memstore.Store).SetFault(f)
		},
	})
}
