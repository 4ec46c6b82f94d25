package main

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/httpd"
	"github.com/dsd-project/dsd/linearizability"
)

// dsd serves an engine on a temporary directory, as cmd/dsd wires it.
func dsd(t *testing.T) string {
	t.Helper()
	e, err := engine.Open(t.TempDir(), engine.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if _, err := e.CreateBucket("default"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(httpd.New(httpd.EngineStore{Engine: e}, httpd.Config{
		LongPollTimeout: 300 * time.Millisecond, CompatBucket: "default"}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func liveOptions(base, report string) options {
	return options{baseURL: base, surface: "flat", bucket: "lincheck", reportDir: report, clients: 8,
		ops: 300, streams: 2, followers: 1, timeout: 10 * time.Second, checkTimeout: time.Minute,
		liveTimeout: 20 * time.Second, staleTTL: time.Second}
}

// A live run against dsd passes and writes its report; the same run through a stale
// caching proxy is reported as a violation (issue 4, done criterion 3).
func TestLiveRunAgainstDsdAndThroughAStaleProxy(t *testing.T) {
	base := dsd(t)
	dir := t.TempDir()
	o := liveOptions(base, filepath.Join(dir, "dsd"))
	if ok, err := run(o); err != nil || !ok {
		t.Fatalf("dslincheck against dsd: ok=%t err=%v", ok, err)
	}
	for _, f := range []string{linearizability.HistoryFile, linearizability.VisualizationFile, linearizability.SummaryFile} {
		if st, err := os.Stat(filepath.Join(o.reportDir, f)); err != nil || st.Size() == 0 {
			t.Errorf("report file %s missing or empty: %v", f, err)
		}
	}
	o = liveOptions(base, filepath.Join(dir, "stale"))
	o.staleProxy, o.expectViolation = true, true
	if ok, err := run(o); err != nil || !ok {
		t.Fatalf("dslincheck through a stale proxy found no violation: ok=%t err=%v", ok, err)
	}

	// Re-checking the saved history gives the same verdict.
	o = options{files: []string{filepath.Join(dir, "dsd", linearizability.HistoryFile)}, checkTimeout: time.Minute}
	if ok, err := run(o); err != nil || !ok {
		t.Fatalf("re-check of the saved history: ok=%t err=%v", ok, err)
	}
}

// The fixtures are re-checked from files, and --expect-violation inverts the verdict.
func TestRecheckFixtures(t *testing.T) {
	good, _ := filepath.Glob("../../linearizability/testdata/*-ok.jsonl")
	bad, _ := filepath.Glob("../../linearizability/testdata/*-bad.jsonl")
	if len(good) == 0 || len(bad) == 0 {
		t.Fatal("no fixtures found")
	}
	if ok, err := run(options{files: good, checkTimeout: time.Minute}); err != nil || !ok {
		t.Fatalf("good fixtures: ok=%t err=%v", ok, err)
	}
	if ok, err := run(options{files: bad, checkTimeout: time.Minute, expectViolation: true}); err != nil || !ok {
		t.Fatalf("bad fixtures: ok=%t err=%v", ok, err)
	}
	if ok, _ := run(options{files: bad[:1], checkTimeout: time.Minute}); ok {
		t.Fatal("a bad fixture passed without --expect-violation")
	}
}

func TestFlags(t *testing.T) {
	if _, err := parseFlags(nil); err == nil {
		t.Error("no base URL and no files must be a usage error")
	}
	if _, err := parseFlags([]string{"--base-url", "http://x", "f.jsonl"}); err == nil {
		t.Error("both a base URL and files must be a usage error")
	}
	if _, err := parseFlags([]string{"--base-url", "http://x", "--surface", "odd"}); err == nil {
		t.Error("an unknown surface must be a usage error")
	}
	o, err := parseFlags([]string{"--base-url", "http://x"})
	if err != nil || o.clients != 8 || o.ops != 2000 || o.surface != "flat" {
		t.Errorf("defaults: %+v %v", o, err)
	}
}
