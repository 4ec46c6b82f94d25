package boltstore_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/dsd-project/dsd/engine/boltstore"
	"github.com/dsd-project/dsd/engine/storage"
)

// A read whose view is taken before a direct (non-logged) group's checkpoint commits and
// whose transaction opens after it prefers the layer's older meta over the stored one:
// SnapshotOf then pairs an old meta with the new file (the old snapshot dropped).
// A read whose view was taken before a direct group committed (with the checkpoint of the
// logged layers) must not return the logged meta with the direct group's data: the view is
// filtered inside the transaction (view.in).
func TestReadsNeverPairALoggedMetaWithANewerDirectGroup(t *testing.T) {
	opts := boltstore.Options{NoSync: true, CheckpointBytes: -1, CheckpointInterval: -1, Warn: func(string, ...any) {}}
	st, err := boltstore.Open(t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	logStream(t, st)
	meta := func(snap uint64) *storage.Meta {
		return &storage.Meta{ID: 1, Bucket: "bk", Stream: "s", ContentType: "text/plain", MediaType: "text/plain",
			Snapshot: &storage.Snapshot{Offset: snap, ContentType: "text/plain"}}
	}
	mustCommit(t, st, storage.Change{SID: 1, PutSnapshot: &storage.SnapshotBody{Offset: 0, Body: []byte("b0")}, Meta: meta(0)})
	var done atomic.Bool
	var bad atomic.Int64
	go func() {
		for !done.Load() {
			m, body, err := st.SnapshotOf(1)
			if err == nil && m != nil && m.Snapshot != nil && body == nil {
				bad.Add(1)
			}
		}
	}()
	deadline := time.Now().Add(3 * time.Second)
	for k := uint64(0); time.Now().Before(deadline) && bad.Load() == 0; k++ {
		// a logged group carrying the current meta (an append that rewrites it)
		mustCommit(t, st, storage.Change{SID: 1, Meta: meta(k)})
		// a direct group: new snapshot k+1, old one dropped
		drop := k
		mustCommit(t, st, storage.Change{SID: 1, PutSnapshot: &storage.SnapshotBody{Offset: k + 1, Body: []byte("b")},
			DropSnapshot: &drop, Meta: meta(k + 1)})
	}
	done.Store(true)
	if n := bad.Load(); n > 0 {
		t.Fatalf("%d reads returned a meta whose snapshot body is gone", n)
	}
}
