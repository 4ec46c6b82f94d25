package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/dsd-project/dsd/cluster"
	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/httpd"
	"github.com/dsd-project/dsd/subs"
)

// clusterOptions are the flags of the storage backend and of the cluster (D11).
type clusterOptions struct {
	backend                         string
	natsURL, natsSysURL, natsListen string
	natsClusterListen, node         string
	natsRoutes                      string
	partitions                      int
}

func clusterFlags(fs *flag.FlagSet, c *clusterOptions) {
	fs.StringVar(&c.backend, "backend", "bbolt", "storage backend: bbolt (one data file) or jetstream (a cluster on NATS JetStream)")
	fs.StringVar(&c.natsURL, "nats-url", "", "jetstream: URL of an external NATS cluster (it must run JetStream with sync_interval: always); empty embeds a nats-server")
	fs.StringVar(&c.natsSysURL, "nats-sys-url", "", "jetstream, external: URL of a system-account user, to check every server's sync_interval (default: --nats-url)")
	fs.StringVar(&c.natsListen, "nats-listen", "127.0.0.1:4222", "jetstream, embedded: NATS client listener (host:port)")
	fs.StringVar(&c.natsClusterListen, "nats-cluster-listen", "", "jetstream, embedded: NATS route listener for the other nodes (host:port); empty runs a lone server with one replica")
	fs.StringVar(&c.natsRoutes, "nats-routes", "", "jetstream, embedded: comma-separated route listeners of all nodes, this one included (host:port,...)")
	fs.StringVar(&c.node, "node-id", "", "jetstream: this node's unique name (default: the host name of --addr and its port)")
	fs.IntVar(&c.partitions, "partitions", 12, "jetstream: number of partitions P, fixed when the cluster is created; every node must give the same")
}

// served is what the HTTP server serves: a store, the handler around httpd's, and how
// to close them.
type served struct {
	eng   *engine.Engine // the bbolt engine (nil in a cluster: one engine per owned partition)
	ready func() error   // a cluster node's readiness (/readyz); nil with eng
	store httpd.Store
	subs  httpd.SubscriptionWorker // the delivery workers behind the __ds routes
	wrap  func(http.Handler) http.Handler
	path  string
	close func() error
}

// openServed opens the configured backend: the data file (with the subscription worker),
// or a cluster node advertising --addr, whose port must then be given.
func openServed(o options, obs engine.Observer) (served, error) {
	if o.cluster.backend == "jetstream" {
		if _, port, err := net.SplitHostPort(o.addr); err != nil || port == "0" {
			return served{}, fmt.Errorf("--backend jetstream: --addr %q must name a port other nodes can reach", o.addr)
		}
		return openCluster(o, o.addr)
	}
	if o.cluster.backend != "bbolt" {
		return served{}, fmt.Errorf("--backend %q: use bbolt or jetstream", o.cluster.backend)
	}
	eng, err := openEngine(o, obs)
	if err != nil {
		return served{}, err
	}
	worker, err := startWorker(eng, o)
	if err != nil {
		eng.Close()
		return served{}, err
	}
	return served{eng: eng, store: httpd.EngineStore{Engine: eng}, subs: worker, path: eng.Path(),
		wrap: func(h http.Handler) http.Handler { return h },
		close: func() error {
			stopWorker(worker)
			return eng.Close()
		}}, nil
}

// openCluster joins (or forms) a cluster: an embedded nats-server or a connection to an
// external one, JetStream's sync setting checked, then a cluster node whose partitions
// each run an engine over their own jsstore store (prefix DSD<k>, one JetStream stream).
func openCluster(o options, addr string) (served, error) {
	c := o.cluster
	if o.unsafeNoSync {
		return served{}, errors.New("--unsafe-no-sync does not apply to --backend jetstream (it always fsyncs on a quorum)")
	}
	if c.node == "" {
		c.node = strings.NewReplacer(":", "-", ".", "-").Replace(addr)
	}
	var srv *server.Server
	url := c.natsURL
	routes := splitList(c.natsRoutes)
	replicas := 3
	if url == "" {
		s, err := cluster.StartEmbedded(cluster.EmbedConfig{Name: c.node, Listen: c.natsListen,
			ClusterListen: c.natsClusterListen, Routes: routes,
			StoreDir: filepath.Join(o.dataDir, "nats")})
		if err != nil {
			return served{}, err
		}
		srv, url = s, s.ClientURL()
		if c.natsClusterListen == "" {
			replicas = 1
		}
	}
	stop := func() {
		if srv != nil {
			srv.Shutdown()
		}
	}
	nc, err := nats.Connect(url, nats.Name("dsd "+c.node), nats.MaxReconnects(-1),
		nats.ReconnectWait(250*time.Millisecond))
	if err != nil {
		stop()
		return served{}, fmt.Errorf("--nats-url %s: %w", url, err)
	}
	sys := nc
	if c.natsSysURL != "" {
		if sys, err = nats.Connect(c.natsSysURL, nats.Name("dsd "+c.node+" sync check")); err != nil {
			nc.Close()
			stop()
			return served{}, fmt.Errorf("--nats-sys-url: %w", err)
		}
		defer sys.Close()
	}
	open, err := partitionStores(nc, sys, srv, c.node, replicas)
	if err != nil {
		nc.Close()
		stop()
		return served{}, err
	}
	node, err := cluster.Start(nc, cluster.Config{NodeID: c.node, Addr: addr, Partitions: c.partitions,
		Peers: len(routes), Rank: indexOf(routes, c.natsClusterListen), Replicas: replicas,
		Open: open, CompatBucket: o.compatBucket,
		Subscriptions: &subs.Options{AllowLoopback: o.webhookLoopback}})
	if err != nil {
		nc.Close()
		stop()
		return served{}, err
	}
	return served{store: node.Store(), ready: node.Ready, subs: node.Subscriptions(), path: "jetstream " + url + " node " + c.node,
		wrap: func(h http.Handler) http.Handler { return node.Forwarder(h, o.compatBucket, o.maxBody) },
		close: func() error {
			err := node.Close()
			nc.Close()
			stop()
			return err
		}}, nil
}

func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

func indexOf(list []string, x string) int {
	for i, y := range list {
		if strings.TrimPrefix(y, "nats://") == x {
			return i
		}
	}
	return 0
}
