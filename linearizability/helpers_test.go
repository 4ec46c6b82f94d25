package linearizability

import (
	"context"
	"flag"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/engine/enginetest"
	"github.com/dsd-project/dsd/httpd"
)

var (
	flagOps       = flag.Int("lin.ops", 0, "main-phase operations per history (0: 600, or 200 with -short)")
	flagClients   = flag.Int("lin.clients", 8, "concurrent clients per history")
	flagStreams   = flag.Int("lin.streams", 4, "streams per history")
	flagSeed      = flag.Uint64("lin.seed", 0, "workload seed (0: random, printed)")
	flagReportDir = flag.String("lin.report-dir", "", "where failing histories are written (default $REPORT_DIR/linearizability, else the test's temp dir)")
)

// testConfig is the workload size of a test: the flags, bounded under -short.
func testConfig() Config {
	ops := *flagOps
	if ops == 0 {
		ops = 600
		if testing.Short() {
			ops = 200
		}
	}
	return Config{Clients: *flagClients, Ops: ops, Streams: *flagStreams, Seed: *flagSeed,
		LiveTimeout: 20 * time.Second, ConcurrentBootstrap: true}
}

// openEngine opens an engine (on the backend enginetest selects) in a temporary directory (NoSync: durability is not under
// test here) with the compat bucket of dsd's flat surface.
func openEngine(t testing.TB) *engine.Engine {
	t.Helper()
	e, err := enginetest.Open(t.TempDir(), engine.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if _, err := e.CreateBucket("default"); err != nil {
		t.Fatal(err)
	}
	return e
}

// serve starts an HTTP server for store, with a short long-poll timeout and SSE max age
// so live readers see timeouts and reconnects.
func serve(t testing.TB, store httpd.Store) string {
	t.Helper()
	srv := httptest.NewServer(httpd.New(store, httpd.Config{LongPollTimeout: 300 * time.Millisecond,
		SSEMaxAge: 2 * time.Second, SSEKeepAlive: 500 * time.Millisecond, CompatBucket: "default"}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// recordAndCheck records a run with client and checks it.
func recordAndCheck(t *testing.T, client Client, cfg Config) (Run, Result) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run, err := Record(ctx, client, cfg)
	if err != nil {
		t.Fatalf("record: %v", err)
	}
	res := CheckRun(run, CheckOptions{Timeout: time.Minute})
	t.Logf("seed %d: %s; %d live transcripts", run.Config.Seed, res.Summary(), len(run.History.Live))
	return run, res
}

// reportDir is where a test keeps a failing history (etcd's persist-on-failure habit).
func reportDir(t *testing.T) string {
	base := *flagReportDir
	if base == "" {
		if d := os.Getenv("REPORT_DIR"); d != "" {
			base = filepath.Join(d, "linearizability")
		}
	}
	if base == "" {
		base = t.TempDir()
	}
	return filepath.Join(base, regexp.MustCompile(`[^A-Za-z0-9_.-]+`).ReplaceAllString(t.Name(), "_"))
}

// requirePass fails the test with the violations, writing the report first; with
// PERSIST_RESULTS set the report is written on success too.
func requirePass(t *testing.T, run Run, res Result) {
	t.Helper()
	if res.OK() && os.Getenv("PERSIST_RESULTS") == "" {
		return
	}
	dir := reportDir(t)
	if err := WriteReport(dir, run.History, res); err != nil {
		t.Errorf("write report: %v", err)
	}
	if !res.OK() {
		t.Fatalf("%s\nreport: %s\n%s", res.Summary(), dir, describeErrors(res.Errors))
	}
}
