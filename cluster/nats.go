package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
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
		ServerName: c.Name, Host: host, Port: port, NoSigs: true, NoLog: true,
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
	go s.Start()
	if !s.ReadyForConnections(30 * time.Second) {
		s.Shutdown()
		return nil, errors.New("embedded nats-server: not ready after 30s")
	}
	return s, nil
}

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

// CheckSyncAlways asks every server of the cluster nc is connected to for its varz and
// fails unless all of them run JetStream with sync: always (D11: an acknowledgement means
// fsynced on a quorum). It needs a user allowed to request $SYS.REQ.SERVER.PING.VARZ (the
// system account); without answers it fails too, since it cannot tell.
func CheckSyncAlways(nc *nats.Conn, wait time.Duration) error {
	inbox := nats.NewInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		return err
	}
	defer sub.Unsubscribe()
	if err := nc.PublishRequest("$SYS.REQ.SERVER.PING.VARZ", inbox, nil); err != nil {
		return err
	}
	seen := 0
	for {
		m, err := sub.NextMsg(wait)
		if errors.Is(err, nats.ErrTimeout) {
			break
		}
		if err != nil {
			return err
		}
		var v struct {
			Server struct{ Name string } `json:"server"`
			Data   struct {
				JetStream struct {
					Config *struct {
						SyncAlways bool `json:"sync_always"`
					} `json:"config"`
				} `json:"jetstream"`
			} `json:"data"`
		}
		if err := json.Unmarshal(m.Data, &v); err != nil {
			return fmt.Errorf("varz of a NATS server: %w", err)
		}
		if c := v.Data.JetStream.Config; c == nil || !c.SyncAlways {
			return fmt.Errorf("NATS server %q does not run JetStream with sync_interval: always; dsd refuses to start (acknowledged writes could be lost on power loss)", v.Server.Name)
		}
		seen++
	}
	if seen == 0 {
		return errors.New("no NATS server answered $SYS.REQ.SERVER.PING.VARZ, so dsd cannot check that JetStream runs with sync_interval: always; connect with a system-account user")
	}
	return nil
}

// CheckEmbeddedSyncAlways fails unless the embedded server fsyncs every write.
func CheckEmbeddedSyncAlways(s *server.Server) error {
	js := s.JetStreamConfig()
	if js == nil || !js.SyncAlways {
		return errors.New("the embedded NATS server does not run JetStream with sync: always")
	}
	return nil
}
