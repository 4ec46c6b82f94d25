package jsstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/dsd-project/dsd/engine/jsstore/jstest"
	"github.com/dsd-project/dsd/engine/storage"
	"github.com/dsd-project/dsd/engine/storage/storagetest"
)

var prefixes atomic.Int64

// env is one embedded 3-node cluster shared by a test's subtests; every store gets its
// own prefix, so stores do not see each other.
type env struct {
	c  *jstest.Cluster
	nc *nats.Conn
}

func newEnv(t *testing.T) *env {
	c := jstest.Start(t, 3, false)
	return &env{c: c, nc: c.Connect()}
}

func (e *env) opts() Options {
	return Options{Partitions: 2, Replicas: 3, Prefix: fmt.Sprintf("T%d", prefixes.Add(1)),
		Servers: e.c.Servers(), ResolveTimeout: 20 * time.Second}
}

func (e *env) open(t testing.TB, o Options) *Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := Open(ctx, e.nc, o)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// The storage contract on a 3-node JetStream cluster (R3, sync always), then the cases
// only a replicated backend has. Spec: DESIGN.md D4, D11; design/distributed.md §4.4, §9.
func TestJetStream(t *testing.T) {
	e := newEnv(t)
	t.Run("Contract", func(t *testing.T) {
		storagetest.Run(t, storagetest.Harness{
			New: func(t *testing.T) func() storage.Backend {
				o := e.opts()
				return func() storage.Backend { return e.open(t, o) }
			},
			FailCommits: func(b storage.Backend, on bool) {
				var f func() error
				if on {
					f = func() error { return errors.New("injected failure") }
				}
				b.(*Store).SetFault(f)
			},
		})
	})
	t.Run("InDoubtResend", func(t *testing.T) { testInDoubt(t, e) })
	t.Run("LargeFrames", func(t *testing.T) { testLargeFrames(t, e) })
	t.Run("CheckpointedReload", func(t *testing.T) { testCheckpoints(t, e) })
	t.Run("ConflictFences", func(t *testing.T) { testConflict(t, e) })
	t.Run("ForkReferences", func(t *testing.T) { testForkReferences(t, e) })
	t.Run("RacingWriters", func(t *testing.T) { testRacingWriters(t, e) })
	t.Run("Purges", func(t *testing.T) { testPurges(t, e) })
	t.Run("SubscriptionCrashWindow", func(t *testing.T) { testKVCrashWindow(t, e) })
	t.Run("SubscriptionConflict", func(t *testing.T) { testKVConflict(t, e) })
	t.Run("PartitionHandover", func(t *testing.T) { testPartitionHandover(t, e) })
	t.Run("Orphans", func(t *testing.T) { testOrphans(t, e) })
	t.Run("OffsetIndex", func(t *testing.T) { testOffsetIndex(t, e) })
}

func TestMain(m *testing.M) {
	jstest.RunNodeIfChild()
	os.Exit(m.Run())
}

func jstestStart(b *testing.B) *jstest.Cluster { return jstest.Start(b, 3, false) }

func openBench(b *testing.B, nc *nats.Conn, c *jstest.Cluster) *Store {
	e := &env{c: c, nc: nc}
	return e.open(b, e.opts())
}
