package boltstore_test

import (
	"errors"
	"testing"

	"github.com/dsd-project/dsd/engine/boltstore"
	"github.com/dsd-project/dsd/engine/storage"
	"github.com/dsd-project/dsd/engine/storage/storagetest"
)

// The storage contract on a data file. Spec: DESIGN.md D4, D11.
func TestContract(t *testing.T) {
	storagetest.Run(t, storagetest.Harness{
		New: func(t *testing.T) func() storage.Backend {
			dir := t.TempDir()
			return func() storage.Backend {
				st, err := boltstore.Open(dir, boltstore.Options{NoSync: true})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { checkFile(t, dir) })
				return st
			}
		},
		FailCommits: func(b storage.Backend, on bool) {
			var f func() error
			if on {
				f = func() error { return errors.New("injected failure") }
			}
			b.(*boltstore.Store).SetFault(f)
		},
	})
}

// checkFile runs bbolt's consistency check over the data file in dir once it is closed.
func checkFile(t *testing.T, dir string) {
	st, err := boltstore.Open(dir, boltstore.Options{})
	if err != nil {
		t.Errorf("reopen for check: %v", err)
		return
	}
	defer st.Close()
	if err := st.Check(); err != nil {
		t.Errorf("bbolt consistency check: %v", err)
	}
}
