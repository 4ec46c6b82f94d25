package boltstore_test

import (
	"errors"
	"testing"

	"github.com/dsd-project/dsd/engine/boltstore"
	"github.com/dsd-project/dsd/engine/storage"
	"github.com/dsd-project/dsd/engine/storage/storagetest"
)

// The checkpointer settings the contract runs under: the default, every group applied to
// the data file as it commits, and never (every read served from the log's layers).
var checkpointModes = []struct {
	name string
	opts boltstore.Options
}{
	{"default", boltstore.Options{NoSync: true}},
	{"every-group", boltstore.Options{NoSync: true, CheckpointBytes: 1, CheckpointInline: true, CheckpointInterval: -1}},
	{"never", boltstore.Options{NoSync: true, CheckpointBytes: -1, CheckpointInterval: -1}},
}

// The storage contract on a data file and its group log, under each checkpointer
// setting. Spec: DESIGN.md D4, D11.
func TestContract(t *testing.T) {
	for _, mode := range checkpointModes {
		t.Run(mode.name, func(t *testing.T) { contract(t, mode.opts) })
	}
}

func contract(t *testing.T, opts boltstore.Options) {
	storagetest.Run(t, storagetest.Harness{
		New: func(t *testing.T) func() storage.Backend {
			dir := t.TempDir()
			return func() storage.Backend {
				st, err := boltstore.Open(dir, opts)
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
