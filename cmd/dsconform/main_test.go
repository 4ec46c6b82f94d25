package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// runAsMainEnv makes the test binary behave as dsconform itself, so tests can run the kit
// in a subprocess (one Ginkgo RunSpecs per process) without building anything.
const runAsMainEnv = "DSCONFORM_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runAsMainEnv) == "1" {
		os.Exit(runMain(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// dsconformCmd is a command running dsconform with args.
func dsconformCmd(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), runAsMainEnv+"=1")
	return cmd
}

var listeningRE = regexp.MustCompile(`listening on (http://[0-9.:]+)`)

// upstream returns the URL of a server to test against: DS_BASE_URL when set (e.g. under
// tools/with-server.sh), else a fresh bin/dsd started for this test (500ms long-poll,
// temporary data dir). It skips the test, saying why, when neither is available.
// skipUnlessMutants skips the mutant tests outside `make conformance`, which builds dsd
// first and sets DSD_MUTANTS=1 (or DS_BASE_URL names a server): a plain `go test ./...`
// would otherwise run them against whatever bin/dsd happens to exist.
func skipUnlessMutants(t *testing.T) {
	t.Helper()
	if os.Getenv("DSD_MUTANTS") != "1" && os.Getenv("DS_BASE_URL") == "" {
		t.Skip("runs the kit against a live server: run by `make conformance` (DSD_MUTANTS=1), or set DS_BASE_URL")
	}
	if testing.Short() {
		t.Skip("runs the kit against a live server; skipped in -short mode")
	}
}

func upstream(t *testing.T) string {
	t.Helper()
	if u := os.Getenv("DS_BASE_URL"); u != "" {
		return u
	}
	bin, err := filepath.Abs(filepath.Join("..", "..", "bin", "dsd"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("no server: %s not built (make build) and DS_BASE_URL unset", bin)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "--addr", "127.0.0.1:0", "--admin-addr", "", "--data-dir", t.TempDir(), "--long-poll-timeout", "500ms")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cancel()
			<-done
		}
		cancel()
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sent := false
		for sc.Scan() {
			if m := listeningRE.FindStringSubmatch(sc.Text()); m != nil && !sent {
				found <- m[1]
				sent = true
			}
		}
	}()
	select {
	case u := <-found:
		return u
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not report its address", bin)
	}
	return ""
}

// dsconform --help names the subcommands and the exit status, and exits 0.
func TestHelpShowsSubcommandsAndExitStatus(t *testing.T) {
	out, err := dsconformCmd(context.Background(), "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("dsconform --help: %v\n%s", err, out)
	}
	for _, want := range []string{"dsconform list", "dsconform matrix", "Exit status", "--long-poll-timeout", "-base-url"} {
		if !regexp.MustCompile(regexp.QuoteMeta(want)).Match(out) {
			t.Errorf("dsconform --help does not mention %q:\n%s", want, out)
		}
	}
}

// --long-poll-timeout auto measures the server's timeout once (bin/dsd here: 500ms).
func TestLongPollTimeoutAuto(t *testing.T) {
	base := upstream(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := dsconformCmd(ctx, "--base-url", base, "--long-poll-timeout", "auto", "--mode", "smoke").CombinedOutput()
	if err != nil {
		t.Fatalf("dsconform: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`long-poll timeout is about (\S+) \(measured\)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("no measurement printed:\n%s", out)
	}
	d, err := time.ParseDuration(string(m[1]))
	if err != nil || d < 500*time.Millisecond || d > 2*time.Second {
		t.Errorf("measured %s (%v), want about 500ms", m[1], err)
	}
}
