package linearizability

import (
	"testing"
	"time"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/engine/enginetest"
	"github.com/dsd-project/dsd/httpd"
)

// Concurrent clients on the engine's Go API produce a linearizable history whose
// offsets, final contents and live readers keep every guarantee.
// Spec: B-4-01, B-4-04, B-5.2-05, B-5.2.1-03, B-8-01.
func TestEngineLinearizability(t *testing.T) {
	e := openEngine(t)
	run, res := recordAndCheck(t, EngineClient{Store: httpd.EngineStore{Engine: e}, Bucket: "lin-engine"}, testConfig())
	requirePass(t, run, res)
}

// The same while the engine unloads every idle stream every millisecond (Options.LoadedStreams:
// an unloaded stream must reload exactly, and a request racing with its unloading must
// act on the reloaded state).
func TestEngineLinearizabilityUnderEviction(t *testing.T) {
	e, err := enginetest.Open(t.TempDir(), engine.Options{NoSync: true, LoadedStreams: 1, SweepInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if _, err := e.CreateBucket("default"); err != nil {
		t.Fatal(err)
	}
	run, res := recordAndCheck(t, EngineClient{Store: httpd.EngineStore{Engine: e}, Bucket: "lin-evict"}, testConfig())
	requirePass(t, run, res)
	if n := e.Loaded().Unloads; n == 0 {
		t.Fatal("no stream was unloaded during the run: the test did not test eviction")
	} else {
		t.Logf("%d unloads during the run", n)
	}
}

// The same over HTTP, on dsd's handler, on both URL surfaces.
func TestHTTPLinearizability(t *testing.T) {
	for _, surface := range []Surface{SurfaceFlat, SurfaceBucketed} {
		t.Run(string(surface), func(t *testing.T) {
			e := openEngine(t)
			base := serve(t, httpd.EngineStore{Engine: e})
			cfg := testConfig()
			run, res := recordAndCheck(t, NewHTTPClient(base, surface, "lin-http"), cfg)
			requirePass(t, run, res)
		})
	}
}
