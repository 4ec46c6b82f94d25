// Package testserver opens what the HTTP tests of httpd and ops serve: a fresh engine on
// the data file (no fsync, no sweeps during a test) with the compatibility surface's bucket
// created. It imports no HTTP package, so httpd's own tests can use it too.
package testserver

import (
	"testing"
	"time"

	"github.com/dsd-project/dsd/engine"
)

// CompatBucket is the bucket behind the flat /v1/stream/ surface in these tests (the
// httpd.Config.CompatBucket to serve).
const CompatBucket = "default"

// Engine opens a fresh engine in a temporary directory with bucket CompatBucket, closed
// when the test ends.
func Engine(t testing.TB) *engine.Engine {
	t.Helper()
	eng, err := engine.Open(t.TempDir(), engine.Options{NoSync: true, SweepInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	if _, err := eng.CreateBucket(CompatBucket); err != nil {
		t.Fatal(err)
	}
	return eng
}
