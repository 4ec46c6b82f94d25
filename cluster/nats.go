package cluster

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// EmbedConfig configures a nats-server embedded in a dsd node.
type EmbedConfig struct {
	Name          string   // server name (the node id)
	Listen        string   // client listener host:port (port 0: a free one)
	ClusterListen string   // route listener host:port; "" runs a lone server
	Routes        []string // peers' route listeners, host:port or nats://host:port
	StoreDir      string   // JetStream's file store
}

// maxPayload is the embedded servers' largest message (design/distributed.md §4.3).
const maxPayload = 8 << 20

// StartEmbedded starts a nats-server with JetStream in this process, fsyncing every
// write (sync: always) and waits until it takes client connections.
func StartEmbedded(c EmbedConfig) (*server.Server, error) {
	host, port, err := splitHostPort(c.Listen)
	if err != nil {
		return nil, fmt.Errorf("--nats-listen: %w", err)
	}
	o := &server.Options{
		ServerName: c.Name, Host: host, Port: port, NoSigs: true, NoLog: os.Getenv("DSD_NATS_LOG") == "",
		JetStream: true, StoreDir: c.StoreDir, SyncAlways: true, SyncInterval: 2 * time.Minute,
		MaxPayload:      maxPayload,
		JetStreamLimits: server.JSLimitOpts{MaxBatchInflightPerStream: 200},
	}
	if c.ClusterListen != "" {
		ch, cp, err := splitHostPort(c.ClusterListen)
		if err != nil {
			return nil, fmt.Errorf("--nats-cluster-listen: %w", err)
		}
		o.Cluster = server.ClusterOpts{Name: "dsd", Host: ch, Port: cp}
		for _, r := range c.Routes {
			if !strings.Contains(r, "://") {
				r = "nats://" + r
			}
			u, err := url.Parse(r)
			if err != nil {
				return nil, fmt.Errorf("--nats-routes: %q: %w", r, err)
			}
			o.Routes = append(o.Routes, u)
		}
	}
	s, err := server.NewServer(o)
	if err != nil {
		return nil, err
	}
	fatal := &fatalLog{}
	if o.NoLog {
		s.SetLogger(fatal, false, false)
	} else {
		s.ConfigureLogger()
	}
	go s.Start()
	deadline := time.Now().Add(readyWithin)
	for !s.ReadyForConnections(50 * time.Millisecond) {
		if msg := fatal.first(); msg != "" || time.Now().After(deadline) {
			s.Shutdown()
			if msg != "" {
				return nil, fmt.Errorf("embedded nats-server: %s", msg)
			}
			return nil, fmt.Errorf("embedded nats-server: not ready after %v", readyWithin)
		}
	}
	return s, nil
}

// readyWithin bounds an embedded server's start.
const readyWithin = 30 * time.Second

// fatalLog is an embedded server's logger while its own logging is off: it keeps the
// first fatal message (a listener that cannot bind, JetStream that cannot start: the
// server then never becomes ready), so that StartEmbedded fails at once and says why.
type fatalLog struct {
	mu  sync.Mutex
	msg string
}

func (l *fatalLog) Fatalf(format string, v ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.msg == "" {
		l.msg = fmt.Sprintf(format, v...)
	}
}

func (l *fatalLog) first() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.msg
}

func (*fatalLog) Noticef(string, ...any) {}
func (*fatalLog) Warnf(string, ...any)   {}
func (*fatalLog) Errorf(string, ...any)  {}
func (*fatalLog) Debugf(string, ...any)  {}
func (*fatalLog) Tracef(string, ...any)  {}

func splitHostPort(hp string) (string, int, error) {
	h, p, err := net.SplitHostPort(hp)
	if err != nil {
		return "", 0, err
	}
	n, err := strconv.Atoi(p)
	if n == 0 {
		n = server.RANDOM_PORT // nats-server's 0 is its default port
	}
	return h, n, err
}
