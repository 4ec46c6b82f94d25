package linearizability

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/dsd-project/dsd/httpd"
)

// plantedCase is a store with one planted bug and the violation it must cause.
type plantedCase struct {
	name string
	wrap func(httpd.Store) httpd.Store
}

var planted = []plantedCase{
	{"lost-producer-dedup", func(s httpd.Store) httpd.Store { return lostDedup{s} }},
	{"reordered-appends", func(s httpd.Store) httpd.Store { return &reorder{Store: s} }},
	{"stale-cached-read", func(s httpd.Store) httpd.Store { return &staleCache{Store: s} }},
	{"close-admits-one-more-append", func(s httpd.Store) httpd.Store { return &lateClose{Store: s} }},
	{"batch-drops-a-frame", func(s httpd.Store) httpd.Store { return &batchDrop{Store: s} }},
}

// plantedConfig is small but dense: two streams, eight clients.
func plantedConfig() Config {
	cfg := testConfig()
	cfg.Ops, cfg.Streams = 300, 2
	return cfg
}

// Each planted bug is reported as a violation by the engine-level check.
func TestPlantedBugsAreCaughtAtEngineLevel(t *testing.T) {
	for _, pc := range planted {
		t.Run(pc.name, func(t *testing.T) {
			store := pc.wrap(httpd.EngineStore{Engine: openEngine(t)})
			_, res := recordAndCheck(t, EngineClient{Store: store, Bucket: "planted"}, plantedConfig())
			requireViolation(t, res)
		})
	}
}

// Each planted bug is reported as a violation by the HTTP-level check, through httpd.
func TestPlantedBugsAreCaughtOverHTTP(t *testing.T) {
	for _, pc := range planted {
		t.Run(pc.name, func(t *testing.T) {
			base := serve(t, pc.wrap(httpd.EngineStore{Engine: openEngine(t)}))
			_, res := recordAndCheck(t, NewHTTPClient(base, SurfaceBucketed, "planted"), plantedConfig())
			requireViolation(t, res)
		})
	}
}

// A store that loses responses (applied or not) is still linearizable: unknown outcomes
// must not be reported as violations.
func TestLostResponsesAreNotViolations(t *testing.T) {
	store := &flaky{Store: httpd.EngineStore{Engine: openEngine(t)}, rng: rand.New(rand.NewPCG(1, 2))}
	run, res := recordAndCheck(t, EngineClient{Store: store, Bucket: "flaky"}, plantedConfig())
	if res.Unknown == 0 {
		t.Fatal("the flaky store lost no response; the test tests nothing")
	}
	requirePass(t, run, res)
}

func requireViolation(t *testing.T, res Result) {
	t.Helper()
	if res.OK() {
		t.Fatalf("the planted bug went unnoticed: %s", res.Summary())
	}
	for _, err := range res.Errors {
		if errors.Is(err, errAssumption) {
			t.Fatalf("the history broke a recording assumption instead: %v", err)
		}
	}
	t.Logf("caught: %v", res.Errors[0])
}
