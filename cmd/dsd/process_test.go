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
	cmd    *exec.Cmd
	url    string
	adminc chan string // the admin listener's URL, once logged
	done   chan struct{}
	log    *syncBuffer
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

var (
	listenRe = regexp.MustCompile(`listening on (https?://[0-9.:]+)`)
	adminRe  = regexp.MustCompile(`admin listening on (http://[0-9.:]+)`)
)

// startDSD starts dsd on a free port (its admin listener on another) with the given data
// dir and waits for its address.
func startDSD(t *testing.T, dataDir string, extra ...string) *dsdProcess {
	t.Helper()
	args := append([]string{"--addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0", "--data-dir", dataDir,
		"--long-poll-timeout", "500ms"}, extra...)
	return startDSDArgs(t, args...)
}

// startDSDArgs starts dsd with exactly args and waits for its address.
func startDSDArgs(t *testing.T, args ...string) *dsdProcess {
	t.Helper()
	p, err := launchDSD(dsdBinary(t), args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.kill() })
	return p
}

// launchDSD starts bin with args and waits for its address; on failure the process is
// killed and the error carries its log. It may run on any goroutine.
func launchDSD(bin string, args ...string) (*dsdProcess, error) {
	cmd := exec.Command(bin, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &dsdProcess{cmd: cmd, done: make(chan struct{}), log: &syncBuffer{}, adminc: make(chan string, 1)}
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			p.log.Write([]byte(line + "\n"))
			if m := adminRe.FindStringSubmatch(line); m != nil {
				sendOnce(p.adminc, m[1])
			} else if m := listenRe.FindStringSubmatch(line); m != nil {
				sendOnce(urlc, m[1])
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	go func() { cmd.Wait(); close(p.done) }()
	select {
	case p.url = <-urlc:
		return p, nil
	case <-p.done:
		return nil, fmt.Errorf("dsd exited during start-up:\n%s", p.log)
	case <-time.After(30 * time.Second):
		p.kill()
		return nil, fmt.Errorf("dsd did not start:\n%s", p.log)
	}
}

// sendOnce sends v unless c (buffered, of size 1) is full: the log reader never blocks.
func sendOnce(c chan string, v string) {
	select {
	case c <- v:
	default:
	}
}

// adminURL waits for the admin listener's address in the log.
func (p *dsdProcess) adminURL(t *testing.T) string {
	t.Helper()
	select {
	case u := <-p.adminc:
		p.adminc <- u
		return u
	case <-time.After(5 * time.Second):
		t.Fatalf("dsd logged no admin address:\n%s", p.log)
	}
	return ""
}

func (p *dsdProcess) kill() {
	select {
	case <-p.done:
	default:
		p.cmd.Process.Kill()
		<-p.done
	}
}
