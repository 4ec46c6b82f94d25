package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// A backup taken under write load checks clean, and dsd started on it serves every append
// acknowledged before the backup began (and nothing torn). Spec: D12.
func TestBackupUnderLoadRestores(t *testing.T) {
	if testing.Short() {
		t.Skip("starts dsd processes; skipped with -short")
	}
	p := startDSD(t, t.TempDir())
	l := &crashLoad{base: p.url + "/v1/stream/", sent: map[string][]sent{}, prodOK: map[string][2]int{}}
	streams := map[string]string{"plain": "text/plain", "prod": "text/plain", "json": "application/json"}
	for s, ct := range streams {
		mustDo(t, "PUT", l.base+s, ct, "", nil, 201)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 6; w++ {
		wg.Add(1)
		go func(w int) { defer wg.Done(); l.writer(w, stop) }(w)
	}
	time.Sleep(500 * time.Millisecond)
	before := map[string]int{} // appends answered before the backup began
	l.mu.Lock()
	for s, list := range l.sent {
		before[s] = len(list)
	}
	l.mu.Unlock()
	out := filepath.Join(t.TempDir(), "copy.db")
	res, err := exec.Command(dsdBinary(t), "backup", "--from", p.adminURL(t), "--out", out).CombinedOutput()
	time.Sleep(200 * time.Millisecond) // the load goes on after the copy
	close(stop)
	wg.Wait()
	if err != nil || !strings.Contains(string(res), "bytes") {
		t.Fatalf("dsd backup: %v\n%s", err, res)
	}
	if res, err := exec.Command(dsdBinary(t), "check", out).CombinedOutput(); err != nil || !strings.Contains(string(res), ": ok (") {
		t.Fatalf("dsd check of the copy: %v\n%s", err, res)
	}
	restored := t.TempDir()
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(restored, "dsd.db"), b, 0o600)
	p2 := startDSD(t, restored)
	r := &crashLoad{base: p2.url + "/v1/stream/", sent: map[string][]sent{}}
	for s, list := range l.sent { // answered after the backup began: may or may not be in it
		for i, x := range list {
			if i >= before[s] {
				x.acked = ""
			}
			r.sent[s] = append(r.sent[s], x)
		}
	}
	total := 0
	for s, ct := range streams {
		total += r.verify(t, s, ct)
	}
	if total < 50 {
		t.Fatalf("only %d appends acknowledged before the backup: load too light to mean anything", total)
	}
	t.Logf("the restored copy holds all %d appends acknowledged before the backup", total)
}

// dsd check exits 1 on a damaged file and 2 on bad usage; dsd backup refuses a bad URL.
func TestCheckAndBackupUsage(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.db")
	os.WriteFile(bad, []byte("not a bbolt file at all, just text"), 0o600)
	if rc, _, errs := dsdRun("check", bad); rc != 1 || errs == "" {
		t.Errorf("check of garbage: rc %d, %q", rc, errs)
	}
	if rc, _, _ := dsdRun("check"); rc != 2 {
		t.Errorf("check without a file: rc %d", rc)
	}
	if rc, _, _ := dsdRun("backup", "--out", "x"); rc != 2 {
		t.Errorf("backup without --from: rc %d", rc)
	}
	out := filepath.Join(t.TempDir(), "x.db")
	if rc, _, errs := dsdRun("backup", "--from", "ftp://h", "--out", out); rc != 1 || !strings.Contains(errs, "--from") {
		t.Errorf("backup from ftp: rc %d %q", rc, errs)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a failed backup left a file")
	}
}
