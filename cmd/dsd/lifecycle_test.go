package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// SIGTERM drains and closes the data file cleanly: the process exits 0 and a restart
// serves what was written.
func TestSIGTERMDrainsAndCloses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts dsd processes; skipped with -short")
	}
	dir := t.TempDir()
	p := startDSD(t, dir)
	if resp, err := do("PUT", p.url+"/v1/stream/x", "text/plain", []byte("kept"), nil); err != nil || resp.StatusCode != 201 {
		t.Fatalf("create: %v %v", resp, err)
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		t.Fatal("dsd did not exit after SIGTERM")
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("exit code %d:\n%s", code, p.log)
	}
	if !strings.Contains(p.log.String(), "stopped") {
		t.Fatalf("no clean stop logged:\n%s", p.log)
	}
	p2 := startDSD(t, dir)
	resp, err := do("GET", p2.url+"/v1/stream/x", "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if string(b) != "kept" {
		t.Fatalf("after restart: %q", b)
	}
}

// A second dsd on the same data dir fails fast with a clear message.
func TestSecondProcessOnSameDataDirFailsFast(t *testing.T) {
	if testing.Short() {
		t.Skip("starts dsd processes; skipped with -short")
	}
	dir := t.TempDir()
	startDSD(t, dir)
	start := time.Now()
	out, err := exec.Command(dsdBinary(t), "--addr", "127.0.0.1:0", "--admin-addr", "", "--data-dir", dir).CombinedOutput()
	if err == nil {
		t.Fatalf("second dsd started:\n%s", out)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("took %v to fail", el)
	}
	if !strings.Contains(string(out), "in use by another process") {
		t.Fatalf("unclear message: %s", out)
	}
}

// --help documents every flag.
func TestHelpDocumentsFlags(t *testing.T) {
	out, _ := exec.Command(dsdBinary(t), "--help").CombinedOutput()
	for _, f := range []string{"-addr", "-data-dir", "-long-poll-timeout", "-sse-max-age", "-compat-bucket", "-max-body", "-auth-tokens",
		"-body-budget", "-body-idle-timeout", "-live-buffer-budget", "-max-loaded-streams"} {
		if !strings.Contains(string(out), f) {
			t.Errorf("--help does not mention %s", f)
		}
	}
}

// With --auth-tokens, requests without a listed bearer token get 401 and change nothing.
// Spec: B-12-01.
func TestAuthTokens(t *testing.T) {
	if testing.Short() {
		t.Skip("starts dsd processes; skipped with -short")
	}
	tokens := filepath.Join(t.TempDir(), "tokens")
	os.WriteFile(tokens, []byte("# ops\nsecret-1\n\nsecret-2\n"), 0o600)
	p := startDSD(t, t.TempDir(), "--auth-tokens", tokens)
	u := p.url + "/v1/stream/a"
	for _, hdr := range []map[string]string{nil, {"Authorization": "Bearer nope"}, {"Authorization": "secret-1"}} {
		resp, err := do("PUT", u, "text/plain", nil, hdr)
		if err != nil || resp.StatusCode != 401 {
			t.Fatalf("PUT with %v: %v %v", hdr, resp, err)
		}
	}
	resp, err := do("HEAD", u, "", nil, map[string]string{"Authorization": "Bearer secret-2"})
	if err != nil || resp.StatusCode != 404 {
		t.Fatalf("rejected PUTs must create nothing: %v %v", resp, err)
	}
	resp, err = do("PUT", u, "text/plain", nil, map[string]string{"Authorization": "Bearer secret-2"})
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("PUT with a listed token: %v %v", resp, err)
	}
}
