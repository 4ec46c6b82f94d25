package linearizability

import (
	"testing"

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
