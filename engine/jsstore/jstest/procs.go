package jstest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// nodeEnv carries a child node's parameters from Procs to RunNodeIfChild.
const nodeEnv = "JSTEST_NODE"

type nodeSpec struct {
	I, N  int
	Ports []int
	Dir   string
}

// RunNodeIfChild runs this process as one node of a Procs cluster when it was started
// as one (call it first in TestMain); it never returns then. The node exits when its
// parent closes its stdin (the test ended or died) or on SIGKILL.
func RunNodeIfChild() {
	v := os.Getenv(nodeEnv)
	if v == "" {
		return
	}
	var sp nodeSpec
	if err := json.Unmarshal([]byte(v), &sp); err != nil {
		fmt.Fprintln(os.Stderr, "jstest node:", err)
		os.Exit(2)
	}
	s, err := server.NewServer(nodeOptions(sp.I, sp.N, sp.Ports, sp.Dir, true))
	if err != nil {
		fmt.Fprintln(os.Stderr, "jstest node:", err)
		os.Exit(2)
	}
	go s.Start()
	_, _ = io.Copy(io.Discard, os.Stdin)
	s.Shutdown()
	os.Exit(0)
}

// Procs is a cluster whose nodes are child processes of the test binary (sync always),
// so that a node can be killed with SIGKILL: a crash, not a shutdown that hands its
// leaderships over first.
type Procs struct {
	t     testing.TB
	spec  []nodeSpec
	procs []*exec.Cmd
	stdin []io.Closer
}

// StartProcs starts n child nodes and waits until JetStream answers. The test binary's
// TestMain must call RunNodeIfChild.
func StartProcs(t testing.TB, n int) *Procs {
	t.Helper()
	dir, ports := t.TempDir(), freePorts(t, 2*n)
	c := &Procs{t: t, procs: make([]*exec.Cmd, n), stdin: make([]io.Closer, n)}
	for i := 0; i < n; i++ {
		c.spec = append(c.spec, nodeSpec{I: i, N: n, Ports: ports, Dir: dir})
		c.Restart(i)
	}
	t.Cleanup(c.stopAll)
	nc := c.Connect()
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	// Up means every node placed: an R n stream can be created.
	probe := jetstream.StreamConfig{Name: "JSTEST_PROBE", Subjects: []string{"jstest.probe"}, Replicas: n}
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := js.CreateStream(ctx, probe)
		if err == nil {
			err = js.DeleteStream(ctx, probe.Name)
		}
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("child cluster: JetStream not up: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return c
}

// URLs returns the client URLs of all nodes, comma separated.
func (c *Procs) URLs() string {
	sp := c.spec[0]
	out := ""
	for i := 0; i < sp.N; i++ {
		if i > 0 {
			out += ","
		}
		out += fmt.Sprintf("nats://127.0.0.1:%d", sp.Ports[i])
	}
	return out
}

// Connect returns a connection that reconnects to another node when its node dies.
func (c *Procs) Connect() *nats.Conn {
	c.t.Helper()
	var nc *nats.Conn
	var err error
	for try := 0; try < 50; try++ {
		nc, err = nats.Connect(c.URLs(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond),
			nats.Timeout(2*time.Second))
		if err == nil {
			c.t.Cleanup(nc.Close)
			return nc
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.t.Fatal(err)
	return nil
}

// Index returns the index of the node named name ("n2": 1), -1 if none.
func (c *Procs) Index(name string) int {
	var i int
	if _, err := fmt.Sscanf(name, "n%d", &i); err != nil || i < 1 || i > len(c.spec) {
		return -1
	}
	return i - 1
}

// Kill SIGKILLs node i and waits for it to exit.
func (c *Procs) Kill(i int) {
	if p := c.procs[i]; p != nil {
		_ = p.Process.Signal(syscall.SIGKILL)
		_ = p.Wait()
		c.procs[i] = nil
	}
}

// Restart starts node i (again) on its directory and ports.
func (c *Procs) Restart(i int) {
	c.t.Helper()
	if c.procs[i] != nil {
		return
	}
	sp, _ := json.Marshal(c.spec[i])
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), nodeEnv+"="+string(sp))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		c.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	c.procs[i], c.stdin[i] = cmd, in
}

func (c *Procs) stopAll() {
	for i, p := range c.procs {
		if p != nil {
			_ = c.stdin[i].Close()
			done := make(chan struct{})
			go func() { _ = p.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				_ = p.Process.Signal(syscall.SIGKILL)
				<-done
			}
			c.procs[i] = nil
		}
	}
}
