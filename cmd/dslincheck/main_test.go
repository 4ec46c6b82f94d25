package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dsd-project/dsd/httpd"
	"github.com/dsd-project/dsd/internal/testserver"
	"github.com/dsd-project/dsd/linearizability"
)

// dsd serves an engine on a temporary directory, as cmd/dsd wires it.
func dsd(t *testing.T) string { return serve(t, dsdHandler(t)) }

// dsdHandler is dsd's handler over an engine on a temporary directory.
func dsdHandler(t *testing.T) http.Handler {
	t.Helper()
	return httpd.New(httpd.EngineStore{Engine: testserver.Engine(t)}, httpd.Config{LongPollTimeout: 300 * time.Millisecond,
		CompatBucket: testserver.CompatBucket})
}

// serve serves h on a loopback port for the test.
func serve(t *testing.T, h http.Handler) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

func liveOptions(base, report string) options {
	return options{baseURL: base, baseURLs: []string{base}, surface: "flat", streamPath: "/v1/stream/",
		extensions: "auto", compat: "default", bucket: "lincheck", reportDir: report, clients: 8,
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
	if err != nil || o.clients != 8 || o.ops != 2000 || o.surface != "flat" || o.extensions != "auto" ||
		o.streamPath != "/v1/stream/" {
		t.Errorf("defaults: %+v %v", o, err)
	}
	o, err = parseFlags([]string{"--base-url", "http://a/", "--base-url", "http://b,http://c"})
	if err != nil || !slices.Equal(o.baseURLs, []string{"http://a", "http://b", "http://c"}) || o.baseURL != "http://a" {
		t.Errorf("several --base-url: %q %v", o.baseURLs, err)
	}
	for _, bad := range [][]string{{"--stream-path", "v1"}, {"--extensions", "nope"},
		{"--stale-proxy", "--base-url", "http://b"}} {
		if _, err := parseFlags(append([]string{"--base-url", "http://a"}, bad...)); err == nil {
			t.Errorf("%q must be a usage error", bad)
		}
	}
}

// baseOnly serves h as a server of the base protocol only: extension sub-resources are
// 404, Stream-Forked-From is ignored (a plain stream is created) and no response
// announces Stream-Extensions.
func baseOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		for _, sub := range []string{"/append-batch", "/bootstrap", "/attrs", "/snapshot", "/retention"} {
			if strings.HasSuffix(p, sub) || strings.Contains(p, sub+"/") {
				http.NotFound(w, r)
				return
			}
		}
		r.Header.Del("Stream-Forked-From")
		h.ServeHTTP(stripExtensions{w}, r)
	})
}

type stripExtensions struct{ http.ResponseWriter }

func (s stripExtensions) WriteHeader(code int) {
	s.Header().Del("Stream-Extensions")
	s.ResponseWriter.WriteHeader(code)
}

func (s stripExtensions) Flush() { s.ResponseWriter.(http.Flusher).Flush() }

// On a server of the base protocol, --extensions auto (the default) finds no extension
// and the run passes with no flag; on dsd it finds every extension the workload knows
// (issue 18 item 11).
func TestExtensionsAreProbed(t *testing.T) {
	o := liveOptions(dsd(t), "")
	client := linearizability.NewHTTPClient(o.baseURL, linearizability.SurfaceFlat, o.bucket)
	exts, err := extensions(o, client)
	if err != nil || !slices.Equal(exts, workloadExtensions) {
		t.Errorf("dsd: extensions %q (%v), want %q", exts, err, workloadExtensions)
	}

	o = liveOptions(serve(t, baseOnly(dsdHandler(t))), "")
	client = linearizability.NewHTTPClient(o.baseURL, linearizability.SurfaceFlat, o.bucket)
	if exts, err := extensions(o, client); err != nil || len(exts) != 0 {
		t.Errorf("a base-protocol server: extensions %q (%v), want none", exts, err)
	}
	if ok, err := run(o); err != nil || !ok {
		t.Fatalf("dslincheck against a base-protocol server with no flag: ok=%t err=%v", ok, err)
	}
}

// Several --base-urls (the servers of one cluster; here two URLs of one dsd) share the
// requests, and --stream-path is honoured.
func TestSeveralBaseURLs(t *testing.T) {
	base := dsd(t)
	o := liveOptions(base, "")
	o.baseURLs = []string{base, strings.Replace(base, "127.0.0.1", "localhost", 1)}
	o.streamPath = "/v1/stream/"
	if ok, err := run(o); err != nil || !ok {
		t.Fatalf("dslincheck over two base URLs: ok=%t err=%v", ok, err)
	}
}
