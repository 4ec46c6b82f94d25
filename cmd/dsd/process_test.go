package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// dsdBinary builds this command once per test process.
func dsdBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "dsd-bin")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "dsd")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// dsdProcess is a running dsd.
type dsdProcess struct {
	cmd  *exec.Cmd
	url  string
	done chan struct{}
	log  *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b = append(s.b, p...)
	return len(p), nil
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(s.b)
}

var listenRe = regexp.MustCompile(`listening on (http://[0-9.:]+)`)

// startDSD starts dsd on a free port with the given data dir and waits for its address.
func startDSD(t *testing.T, dataDir string, extra ...string) *dsdProcess {
	t.Helper()
	args := append([]string{"--addr", "127.0.0.1:0", "--data-dir", dataDir, "--long-poll-timeout", "500ms"}, extra...)
	cmd := exec.Command(dsdBinary(t), args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &dsdProcess{cmd: cmd, done: make(chan struct{}), log: &syncBuffer{}}
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			p.log.Write([]byte(line + "\n"))
			if m := listenRe.FindStringSubmatch(line); m != nil {
				urlc <- m[1]
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	go func() { cmd.Wait(); close(p.done) }()
	select {
	case p.url = <-urlc:
	case <-p.done:
		t.Fatalf("dsd exited during start-up:\n%s", p.log)
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("dsd did not start:\n%s", p.log)
	}
	t.Cleanup(func() { p.kill() })
	return p
}

func (p *dsdProcess) kill() {
	select {
	case <-p.done:
	default:
		p.cmd.Process.Kill()
		<-p.done
	}
}
