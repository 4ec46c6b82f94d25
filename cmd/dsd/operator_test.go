package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// dsdRun runs dsdMain in process and returns its exit status, stdout and stderr.
func dsdRun(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	rc := dsdMain(args, &out, &errb)
	return rc, out.String(), errb.String()
}

// --version prints the module version and the toolchain; exit 0.
func TestVersion(t *testing.T) {
	rc, out, errs := dsdRun("--version")
	if rc != 0 || !strings.HasPrefix(out, "dsd ") || !strings.Contains(out, runtime.Version()) || errs != "" {
		t.Fatalf("--version: rc %d, stdout %q, stderr %q", rc, out, errs)
	}
}

// --help goes to stdout, with examples; exit 0.
func TestHelpOnStdout(t *testing.T) {
	rc, out, errs := dsdRun("--help")
	if rc != 0 || errs != "" {
		t.Fatalf("--help: rc %d, stderr %q", rc, errs)
	}
	for _, want := range []string{"Examples:", "  dsd --addr", "-admin-addr", "-log-format", "-log-requests", "-version"} {
		if !strings.Contains(out, want) {
			t.Errorf("--help lacks %q", want)
		}
	}
}

// The subcommands' --help goes to stdout with exit 0, like dsd's; bad usage stays exit 2.
func TestSubcommandHelp(t *testing.T) {
	for _, args := range [][]string{{"check", "--help"}, {"check", "-h"}, {"backup", "--help"}, {"backup", "-h"}} {
		rc, out, errs := dsdRun(args...)
		if rc != 0 || errs != "" || !strings.HasPrefix(out, "usage: dsd "+args[0]) {
			t.Errorf("%q: rc %d, stdout %q, stderr %q", args, rc, out, errs)
		}
	}
	if _, out, _ := dsdRun("backup", "--help"); !strings.Contains(out, "-token-file") {
		t.Errorf("backup --help lacks its flags: %q", out)
	}
	for _, args := range [][]string{{"check"}, {"check", "--bogus"}, {"backup"}, {"backup", "--bogus"}} {
		if rc, out, errs := dsdRun(args...); rc != 2 || out != "" || !strings.Contains(errs, "usage: dsd "+args[0]) {
			t.Errorf("%q: rc %d, stdout %q, stderr %q", args, rc, out, errs)
		}
	}
}

// Bad usage is exit 2 with the reason on stderr, and nothing is served.
func TestBadUsageExits2(t *testing.T) {
	for _, args := range [][]string{{"serve"}, {"--addr", "127.0.0.1:0", "extra"}, {"--no-such-flag"},
		{"--log-format", "xml"}, {"--log-level", "loud"},
		{"--max-body", "-5"}, {"--max-body", "0"}, {"--body-budget", "-2"}, {"--live-buffer-budget", "-7"},
		{"--body-idle-timeout", "-1s"}, {"--long-poll-timeout", "0s"}, {"--sse-max-age", "-1s"}} {
		rc, out, errs := dsdRun(args...)
		if rc != 2 || out != "" || !strings.Contains(errs, "dsd --help") {
			t.Errorf("%q: rc %d, stdout %q, stderr %q", args, rc, out, errs)
		}
	}
	_, _, errs := dsdRun("serve")
	if !strings.Contains(errs, `unexpected argument "serve"`) {
		t.Errorf("unclear message: %q", errs)
	}
}

// logLines returns the JSON log lines of p whose msg is msg.
func logLines(t *testing.T, p *dsdProcess, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(p.log.String(), "\n") {
		var m map[string]any
		if line == "" {
			continue
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not a JSON log line: %q", line)
		}
		if m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

// waitLog polls until cond holds for p's log (at most 5 s).
func waitLog(t *testing.T, p *dsdProcess, cond func() bool) {
	t.Helper()
	for i := 0; i < 100 && !cond(); i++ {
		time.Sleep(50 * time.Millisecond)
	}
	if !cond() {
		t.Fatalf("log condition not met:\n%s", p.log)
	}
}

// One JSON line per request: method, path, status, bytes, duration, error code; a live
// read is logged when it ends. The start-up line keeps "listening on http://".
func TestRequestLogJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("starts dsd processes; skipped with -short")
	}
	p := startDSD(t, t.TempDir(), "--log-format", "json")
	u := p.url + "/v1/stream/logged"
	mustDo(t, "PUT", u, "text/plain", "hello", nil, 201)
	mustDo(t, "GET", u+"?offset=-1", "", "", nil, 200)
	mustDo(t, "GET", p.url+"/v1/stream/missing", "", "", nil, 404)
	mustDo(t, "GET", u+"?offset=now&live=long-poll", "", "", nil, 204)
	var reqs []map[string]any
	waitLog(t, p, func() bool { reqs = logLines(t, p, "request"); return len(reqs) >= 4 })
	get, miss, lp := reqs[1], reqs[2], reqs[3]
	if get["method"] != "GET" || get["path"] != "/v1/stream/logged?offset=-1" || get["status"] != 200.0 ||
		get["bytes"] != 5.0 || get["duration"] == nil {
		t.Errorf("read line: %v", get)
	}
	if miss["status"] != 404.0 || miss["code"] != "STREAM_NOT_FOUND" {
		t.Errorf("error line: %v", miss)
	}
	if lp["live"] != "long-poll" || lp["status"] != 204.0 || lp["duration"].(float64) < float64(400*time.Millisecond) {
		t.Errorf("long-poll line (logged when it ends, after the 500ms timeout): %v", lp)
	}
	if len(logLines(t, p, "dsd: listening on "+p.url)) != 1 {
		t.Errorf("start-up line missing:\n%s", p.log)
	}
}

// Request lines are buffered (ops.LogWriter) but never dropped at shutdown: a SIGTERM
// right after the requests writes them all out, before the shutdown lines.
func TestRequestLogFlushedAtShutdown(t *testing.T) {
	if testing.Short() {
		t.Skip("starts dsd processes; skipped with -short")
	}
	p := startDSD(t, t.TempDir())
	mustDo(t, "PUT", p.url+"/v1/stream/flushed", "text/plain", "x", nil, 201)
	for i := 0; i < 20; i++ {
		mustDo(t, "POST", p.url+"/v1/stream/flushed", "text/plain", "y", nil, 204)
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	<-p.done
	log := p.log.String()
	if n := strings.Count(log, "msg=request"); n != 21 {
		t.Fatalf("%d request lines, want 21:\n%s", n, log)
	}
	if strings.LastIndex(log, "msg=request") > strings.Index(log, "dsd: draining") {
		t.Errorf("a request line after the draining line:\n%s", log)
	}
}

// --log-requests=false logs no request lines.
func TestRequestLogOff(t *testing.T) {
	if testing.Short() {
		t.Skip("starts dsd processes; skipped with -short")
	}
	p := startDSD(t, t.TempDir(), "--log-requests=false")
	mustDo(t, "PUT", p.url+"/v1/stream/quiet", "text/plain", "x", nil, 201)
	mustDo(t, "GET", p.url+"/v1/stream/quiet?offset=-1", "", "", nil, 200)
	p.cmd.Process.Signal(syscall.SIGTERM)
	<-p.done
	if strings.Contains(p.log.String(), "msg=request") {
		t.Fatalf("request lines logged:\n%s", p.log)
	}
}

// The admin listener serves /healthz, /readyz, /metrics (dsd_ metrics and the Go runtime)
// and /debug/pprof/, outside the stream namespace.
func TestAdminEndpoints(t *testing.T) {
	if testing.Short() {
		t.Skip("starts dsd processes; skipped with -short")
	}
	p := startDSD(t, t.TempDir())
	a := p.adminURL(t)
	mustDo(t, "PUT", p.url+"/v1/stream/m", "text/plain", "", nil, 201)
	mustDo(t, "POST", p.url+"/v1/stream/m", "text/plain", "12345", nil, 204)
	mustDo(t, "GET", p.url+"/v1/stream/m?offset=-1", "", "", nil, 200)
	if b := string(mustDo(t, "GET", a+"/healthz", "", "", nil, 200)); !strings.Contains(b, `"ok"`) {
		t.Errorf("/healthz: %s", b)
	}
	if b := string(mustDo(t, "GET", a+"/readyz", "", "", nil, 200)); !strings.Contains(b, `"ready"`) {
		t.Errorf("/readyz: %s", b)
	}
	mustDo(t, "GET", a+"/debug/pprof/", "", "", nil, 200)
	mustDo(t, "GET", p.url+"/healthz", "", "", nil, 404) // the stream namespace is untouched
	m := string(mustDo(t, "GET", a+"/metrics", "", "", nil, 200))
	for _, want := range []string{
		`dsd_http_request_duration_seconds_count{method="POST",route="stream",status="204"} 1`,
		`dsd_http_request_duration_seconds_count{method="GET",route="stream",status="200"} 1`,
		"dsd_appends_total 1", "dsd_append_bytes_total 5", "dsd_streams 1", "dsd_buckets 1", "dsd_ready 1",
		"dsd_commit_group_ops_count", "dsd_commit_duration_seconds_bucket", "dsd_storage_errors_total 0",
		"go_goroutines", "process_resident_memory_bytes",
	} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// Live readers are counted by mode while they last (an SSE response parked on a hijacked
// connection ends at --sse-max-age).
func TestMetricsLiveReaders(t *testing.T) {
	if testing.Short() {
		t.Skip("starts dsd processes; skipped with -short")
	}
	p := startDSD(t, t.TempDir(), "--sse-max-age", "2s")
	a := p.adminURL(t)
	mustDo(t, "PUT", p.url+"/v1/stream/live", "text/plain", "x", nil, 201)
	resp, err := http.Get(p.url + "/v1/stream/live?offset=-1&live=sse")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	waitFor(t, func() bool {
		return strings.Contains(string(mustDo(t, "GET", a+"/metrics", "", "", nil, 200)), `dsd_live_readers{mode="sse"} 1`)
	})
	waitFor(t, func() bool {
		return strings.Contains(string(mustDo(t, "GET", a+"/metrics", "", "", nil, 200)), `dsd_live_readers{mode="sse"} 0`)
	})
}

// waitFor polls cond for at most 5 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for i := 0; i < 100; i++ {
		if cond() {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("condition not met in 5 s")
}

// A busy port (main or admin) is a clear start-up error given before the store opens:
// nothing is created in the data directory (a cluster node must not join and claim
// partitions it could never serve).
func TestBusyPortFailsBeforeTheStoreOpens(t *testing.T) {
	if testing.Short() {
		t.Skip("starts dsd processes; skipped with -short")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	busy := ln.Addr().String()
	for _, c := range []struct{ addr, admin, want string }{
		{busy, "", "address already in use"},
		{"127.0.0.1:0", busy, "admin listener (--admin-addr " + busy},
	} {
		dir := filepath.Join(t.TempDir(), "data")
		out, err := exec.Command(dsdBinary(t), "--addr", c.addr, "--admin-addr", c.admin,
			"--data-dir", dir).CombinedOutput()
		if err == nil || !strings.Contains(string(out), c.want) {
			t.Fatalf("--addr %s --admin-addr %q: want a clear start-up error (%q): %v\n%s", c.addr, c.admin, c.want, err, out)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Fatalf("--addr %s --admin-addr %q: the data directory was touched (stat: %v)", c.addr, c.admin, err)
		}
	}
}

// SIGHUP reloads --auth-tokens: a removed token is refused at once, a new scoped one works,
// and a live reader admitted before keeps streaming. The admin listener's pprof needs the
// admin scope. Spec: D12.
func TestTokenReloadKeepsLiveReaders(t *testing.T) {
	if testing.Short() {
		t.Skip("starts dsd processes; skipped with -short")
	}
	tokens := filepath.Join(t.TempDir(), "tokens")
	os.WriteFile(tokens, []byte("t1\n"), 0o600)
	p := startDSD(t, t.TempDir(), "--auth-tokens", tokens, "--sse-max-age", "30s")
	u := p.url + "/v1/stream/guarded"
	bearer := func(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }
	if resp, err := do("PUT", u, "text/plain", []byte("first"), bearer("t1")); err != nil || resp.StatusCode != 201 {
		t.Fatalf("PUT: %v %v", resp, err)
	}
	req, _ := http.NewRequest("GET", u+"?offset=-1&live=sse", nil)
	req.Header.Set("Authorization", "Bearer t1")
	sse, err := http.DefaultClient.Do(req)
	if err != nil || sse.StatusCode != 200 {
		t.Fatalf("SSE: %v %v", sse, err)
	}
	defer sse.Body.Close()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(sse.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	os.WriteFile(tokens, []byte("t2 read:default write:default\nops admin\n"), 0o600)
	p.cmd.Process.Signal(syscall.SIGHUP)
	waitLog(t, p, func() bool { return strings.Contains(p.log.String(), "auth tokens reloaded") })
	if resp, err := do("GET", u+"?offset=-1", "", nil, bearer("t1")); err != nil || resp.StatusCode != 401 {
		t.Fatalf("removed token: %v %v", resp, err)
	}
	if resp, err := do("POST", u, "text/plain", []byte("after-reload"), bearer("t2")); err != nil || resp.StatusCode != 204 {
		t.Fatalf("new token: %v %v", resp, err)
	}
	if resp, err := do("PUT", p.url+"/newbucket1", "", nil, bearer("t2")); err != nil || resp.StatusCode != 403 {
		t.Fatalf("bucket creation without admin: %v %v", resp, err)
	}
	deadline := time.After(5 * time.Second)
	for got := false; !got; {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("the live reader was dropped by the reload")
			}
			got = l == "data:after-reload"
		case <-deadline:
			t.Fatal("the live reader got nothing after the reload")
		}
	}
	a := p.adminURL(t)
	if resp, err := do("GET", a+"/debug/pprof/", "", nil, nil); err != nil || resp.StatusCode != 401 {
		t.Fatalf("pprof without a token: %v %v", resp, err)
	}
	if resp, err := do("GET", a+"/debug/pprof/", "", nil, bearer("ops")); err != nil || resp.StatusCode != 200 {
		t.Fatalf("pprof with the admin scope: %v %v", resp, err)
	}
	if resp, err := do("GET", a+"/backup", "", nil, nil); err != nil || resp.StatusCode != 401 {
		t.Fatalf("backup without a token: %v %v", resp, err)
	}
	tokFile := filepath.Join(t.TempDir(), "admin-token")
	os.WriteFile(tokFile, []byte("ops\n"), 0o600)
	out := filepath.Join(t.TempDir(), "copy.db")
	if rc, _, errs := dsdRun("backup", "--from", a, "--out", out, "--token-file", tokFile); rc != 0 {
		t.Fatalf("backup with the admin token: rc %d %s", rc, errs)
	}
	if rc, _, errs := dsdRun("check", out); rc != 0 {
		t.Fatalf("check: %s", errs)
	}
	mustDo(t, "GET", a+"/metrics", "", "", nil, 200) // open to scrapers
}
