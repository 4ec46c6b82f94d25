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
	{"snapshot-acked-not-stored", func(s httpd.Store) httpd.Store { return &lostSnapshot{Store: s} }},
	{"record-ranges-overlap", func(s httpd.Store) httpd.Store { return &recordsOverlap{Store: s} }},
	{"fork-at-the-current-tail", func(s httpd.Store) httpd.Store { return forkAtTail{s} }},
	{"soft-deleted-source-reads-as-missing", func(s httpd.Store) httpd.Store { return softDeleteIsHard{s} }},
}

// plantedConfig is small but dense: three streams (the middle one with snapshots), eight
// clients.
func plantedConfig() Config {
	cfg := testConfig()
	cfg.Ops, cfg.Streams = 400, 3
	return cfg
}

// Each planted bug is reported as a violation by the engine-level check.
func TestPlantedBugsAreCaughtAtEngineLevel(t *testing.T) {
	for _, pc := range planted {
		t.Run(pc.name, func(t *testing.T) {
			store := pc.wrap(httpd.EngineStore{Engine: openEngine(t)})
			requireViolation(t, func() Result {
				_, res := recordAndCheck(t, EngineClient{Store: store, Bucket: "planted"}, plantedConfig())
				return res
			})
		})
	}
}

// Each planted bug is reported as a violation by the HTTP-level check, through httpd.
func TestPlantedBugsAreCaughtOverHTTP(t *testing.T) {
	for _, pc := range planted {
		t.Run(pc.name, func(t *testing.T) {
			base := serve(t, pc.wrap(httpd.EngineStore{Engine: openEngine(t)}))
			requireViolation(t, func() Result {
				_, res := recordAndCheck(t, NewHTTPClient(base, SurfaceBucketed, "planted"), plantedConfig())
				return res
			})
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

// plantedRuns is how many recorded runs a planted bug may take to show: whether a
// random workload reaches the broken rule is itself random.
const plantedRuns = 3

// requireViolation records runs (each with fresh streams) until one is reported as
// violating, at most plantedRuns.
func requireViolation(t *testing.T, run func() Result) {
	t.Helper()
	var res Result
	for i := 0; i < plantedRuns; i++ {
		if res = run(); !res.OK() {
			break
		}
	}
	if res.OK() {
		t.Fatalf("the planted bug went unnoticed in %d runs: %s", plantedRuns, res.Summary())
	}
	for _, err := range res.Errors {
		if errors.Is(err, errAssumption) {
			t.Fatalf("the history broke a recording assumption instead: %v", err)
		}
	}
	t.Logf("caught: %v", res.Errors[0])
}
