// Package jstest starts an embedded JetStream cluster for tests: n nats-server nodes in
// this process on 127.0.0.1 with random ports, file storage in temporary directories,
// sync_interval: always. Nodes can be stopped and restarted on the same directory and
// ports (a crash and recovery as JetStream sees it).
package jstest

import (
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// Cluster is a running embedded cluster.
type Cluster struct {
	t     testing.TB
	opts  []*server.Options
	Nodes []*server.Server // nil while a node is stopped
}

// Start starts an n-node cluster (n = 1: a single server without routes) whose nodes
// sync always unless noSync, and stops it at the end of the test. It fails the test if
// the cluster has no JetStream meta leader that sees all n peers within 20 s.
func Start(t testing.TB, n int, noSync bool) *Cluster {
	t.Helper()
	dir := t.TempDir()
	ports := freePorts(t, 2*n)
	c := &Cluster{t: t, Nodes: make([]*server.Server, n)}
	for i := 0; i < n; i++ {
		c.opts = append(c.opts, nodeOptions(i, n, ports, dir, !noSync))
	}
	for i := range c.opts {
		c.startNode(i)
	}
	t.Cleanup(c.Shutdown)
	c.waitMetaLeader(20 * time.Second)
	return c
}

// nodeOptions are node i's options among n with the given ports (clients, then routes).
func nodeOptions(i, n int, ports []int, dir string, sync bool) *server.Options {
	o := &server.Options{
		ServerName: fmt.Sprintf("n%d", i+1), Host: "127.0.0.1", Port: ports[i],
		JetStream: true, StoreDir: filepath.Join(dir, fmt.Sprintf("n%d", i+1)),
		SyncAlways: sync, NoLog: true, NoSigs: true, MaxPayload: 8 << 20,
	}
	if n > 1 {
		var routes []string
		for j := 0; j < n; j++ {
			routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", ports[n+j]))
		}
		o.Cluster = server.ClusterOpts{Name: "jstest", Host: "127.0.0.1", Port: ports[n+i]}
		o.Routes = server.RoutesFromStr(strings.Join(routes, ","))
	}
	return o
}

func freePorts(t testing.TB, n int) []int {
	out, err := pickPorts(n)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// pickPorts returns n free loopback ports.
func pickPorts(n int) ([]int, error) {
	var out []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}

func (c *Cluster) startNode(i int) {
	c.t.Helper()
	s, err := server.NewServer(c.opts[i])
	if err != nil {
		c.t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		c.t.Fatalf("node %d not ready", i+1)
	}
	c.Nodes[i] = s
}

func (c *Cluster) waitMetaLeader(d time.Duration) {
	c.t.Helper()
	if err := waitPeers(c.Servers(), len(c.Nodes), d); err != nil {
		c.t.Fatal(err)
	}
}

// waitPeers waits until one of servers is the JetStream meta leader and reports n
// peers online with JetStream (until then, creating an R3 stream can fail with "no
// suitable peers for placement").
func waitPeers(servers []*server.Server, n int, d time.Duration) error {
	for deadline := time.Now().Add(d); ; time.Sleep(50 * time.Millisecond) {
		for _, s := range servers {
			if s.JetStreamIsLeader() && (n == 1 || len(s.JetStreamClusterPeers()) == n) {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("jstest: no JetStream meta leader seeing %d peers within %v", n, d)
		}
	}
}

// URLs returns the client URLs of all nodes, comma separated (for nats.Connect).
func (c *Cluster) URLs() string {
	var out []string
	for _, o := range c.opts {
		out = append(out, fmt.Sprintf("nats://127.0.0.1:%d", o.Port))
	}
	return strings.Join(out, ",")
}

// Servers returns the running nodes.
func (c *Cluster) Servers() []*server.Server {
	var out []*server.Server
	for _, s := range c.Nodes {
		if s != nil {
			out = append(out, s)
		}
	}
	return out
}

// Connect returns a client connection to the cluster, closed at the end of the test; it
// reconnects to another node when its node stops.
func (c *Cluster) Connect() *nats.Conn {
	c.t.Helper()
	nc, err := nats.Connect(c.URLs(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond),
		nats.Timeout(2*time.Second))
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(nc.Close)
	return nc
}

// Stop shuts node i down (its store stays on disk).
func (c *Cluster) Stop(i int) {
	if s := c.Nodes[i]; s != nil {
		s.Shutdown()
		s.WaitForShutdown()
		c.Nodes[i] = nil
	}
}

// Restart starts a stopped node i again on its directory and ports.
func (c *Cluster) Restart(i int) {
	c.t.Helper()
	if c.Nodes[i] == nil {
		c.startNode(i)
	}
}

// StreamLeader returns the index of the node leading stream (account $G), -1 if none.
func (c *Cluster) StreamLeader(stream string) int {
	for i, s := range c.Nodes {
		if s != nil && s.JetStreamIsStreamLeader(server.DEFAULT_GLOBAL_ACCOUNT, stream) {
			return i
		}
	}
	return -1
}

// Shutdown stops every node.
func (c *Cluster) Shutdown() {
	for i := range c.Nodes {
		c.Stop(i)
	}
}
