// Package cluster runs dsd as one node of a cluster on NATS JetStream (DESIGN.md D11,
// design/distributed.md §4.1): the streams are spread over P partitions by bucket; each
// partition has one owner node at a time, holding a lease in the JetStream KV bucket
// dsd_ctl; the owner serves the partition from a local engine over the partition's storage
// backend (engine/jsstore), and every other node forwards the partition's requests to it
// at the HTTP level (Forwarder), so long-poll and SSE are served, and woken, by the owner.
//
// Partitioning by bucket, not by stream name as the design note proposes, keeps every
// operation inside one partition: a bucket's record, its streams, its listing and its
// forks (which live in their source's bucket) all have the same owner, so bucket delete
// and listing need no protocol across partitions. The cost: one bucket's load is served by
// one node.
package cluster

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/engine/storage"
	"github.com/dsd-project/dsd/subs"
)

// Config configures a Node.
type Config struct {
	// NodeID names this node (unique in the cluster; the embedded NATS server's name).
	NodeID string
	// Addr is this node's HTTP listener as other nodes reach it (host:port).
	Addr string
	// Partitions is P, fixed when the cluster is created (every node must agree).
	Partitions int
	// Peers and Rank spread the first ownership of partitions: the node of rank k mod
	// Peers takes partition k at once, the others after a delay. 0 Peers: no spreading.
	Peers, Rank int
	// Replicas of the control bucket (3 in production; 1 for a one-server test).
	Replicas int
	// Open opens partition k's storage backend for an owner of lease term term. The
	// engine of the partition owns it (closes it when the partition is released).
	Open func(k int, term uint64) (storage.Backend, error)
	// Engine configures each partition's engine.
	Engine engine.Options
	// Subscriptions, when set, configures the delivery workers (Store is set per
	// partition; workers.go); nil: no subscriptions.
	Subscriptions *subs.Options
	// CompatBucket is created, when not empty, by the owner of its partition.
	CompatBucket string
	// Logf logs (default log.Printf).
	Logf func(format string, args ...any)
}

// ControlBucket is the JetStream KV bucket of leases.
const ControlBucket = "dsd_ctl"

// Node is one dsd node of a cluster. It is safe for concurrent use.
type Node struct {
	cfg Config
	kv  jetstream.KeyValue

	mu      sync.Mutex
	owned   map[int]*owned       // partitions this node owns
	remote  []holder             // last seen holder of every partition
	changed chan struct{}        // closed and replaced at every change of ownership seen
	workers map[int]*subs.Worker // running delivery workers of owned partitions
	keys    *subs.Worker         // the key worker (JWKS, kid); nil without subscriptions

	stop chan struct{}
	done chan struct{}
}

// owned is a node's ownership of one partition.
type owned struct {
	h      holder
	rev    uint64
	sentAt time.Time      // send time of the last successful renewal (or take)
	valid  time.Time      // serving ends here: sentAt + leaseTTL - leaseMargin
	eng    *engine.Engine // nil until open (n.mu)
	gone   chan struct{}  // closed when the ownership ends

	wmu    sync.Mutex   // orders the start and stop of worker
	worker *subs.Worker // the partition's delivery worker while it runs (wmu)
}

func (o *owned) renewed(rev uint64, sent time.Time) {
	o.rev, o.sentAt = rev, sent
	o.valid = sent.Add(leaseTTL - leaseMargin)
}

// Start joins the cluster over nc: it creates the control bucket when missing (waiting up
// to a minute for JetStream to be ready) and starts the lease loop.
func Start(nc *nats.Conn, cfg Config) (*Node, error) {
	if cfg.Partitions < 1 || cfg.Open == nil || cfg.NodeID == "" || cfg.Addr == "" {
		return nil, errors.New("cluster: NodeID, Addr, Partitions >= 1 and Open are required")
	}
	if cfg.Replicas == 0 {
		cfg.Replicas = 3
	}
	if cfg.Logf == nil {
		cfg.Logf = log.Printf
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	kv, err := controlBucket(js, cfg.Replicas)
	if err != nil {
		return nil, err
	}
	n := &Node{cfg: cfg, kv: kv, owned: make(map[int]*owned), remote: make([]holder, cfg.Partitions),
		changed: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{}),
		workers: map[int]*subs.Worker{}}
	if cfg.Subscriptions != nil {
		if err := n.startKeys(); err != nil {
			return nil, err
		}
	}
	go n.leaseLoop()
	return n, nil
}

// controlBucket creates or opens the KV bucket of leases, retrying while JetStream
// elects its leaders (a cluster that is starting).
func controlBucket(js jetstream.JetStream, replicas int) (jetstream.KeyValue, error) {
	deadline := time.Now().Add(time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket: ControlBucket, History: 1, Replicas: replicas, Storage: jetstream.FileStorage})
		cancel()
		if err == nil {
			return kv, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("cluster: control bucket %s: %w", ControlBucket, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// PartitionOf returns the partition of a bucket: FNV-1a (32 bit) of its id mod P.
func (n *Node) PartitionOf(bucket string) int { return PartitionOf(bucket, n.cfg.Partitions) }

// PartitionOf returns the partition of a bucket among p partitions.
func PartitionOf(bucket string, p int) int {
	h := fnv.New32a()
	h.Write([]byte(bucket))
	return int(h.Sum32() % uint32(p))
}

// leaseLoop runs one lease loop per partition (so that a slow JetStream call on one
// does not delay another's renewal) until Close.
func (n *Node) leaseLoop() {
	defer close(n.done)
	var wg sync.WaitGroup
	for k := range n.cfg.Partitions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n.partitionLoop(k)
		}()
	}
	wg.Wait()
}

// partitionLoop steps partition k's lease every tick; at Close it releases the partition.
func (n *Node) partitionLoop(k int) {
	var st leaseState
	t := time.NewTicker(renewEvery / 4)
	defer t.Stop()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), renewEvery/2)
		n.stepLease(ctx, k, &st)
		cancel()
		n.expire(k)
		n.observe(k, st.obs.h)
		select {
		case <-n.stop:
			n.releaseClean(k, &st)
			return
		case <-t.C:
		}
	}
}

// acquire makes this node the owner of partition k; the partition's engine opens in the
// background (loading it may wait for a JetStream leader) while the lease is renewed, and
// requests wait until it is open.
func (n *Node) acquire(k int, st *leaseState, h holder, rev uint64, sent time.Time) {
	o := &owned{h: h, gone: make(chan struct{})}
	o.renewed(rev, sent)
	st.held = o
	n.mu.Lock()
	n.owned[k] = o
	n.remote[k] = h
	n.signalLocked()
	n.mu.Unlock()
	n.cfg.Logf("cluster: node %s owns partition %d (term %d)", n.cfg.NodeID, k, h.Term)
	go n.open(k, o)
	if n.cfg.Subscriptions != nil {
		go n.superviseWorker(k, o)
	}
}

// open opens partition k's engine for ownership o, retrying every second until it opens
// or o ends.
func (n *Node) open(k int, o *owned) {
	for try := 0; ; try++ {
		select {
		case <-o.gone:
			return
		default:
		}
		eng, err := n.openEngine(k, o.h.Term)
		if err != nil {
			if try%10 == 0 {
				n.cfg.Logf("cluster: partition %d: open: %v (retrying)", k, err)
			}
			time.Sleep(time.Second)
			continue
		}
		n.mu.Lock()
		mine := n.owned[k] == o
		if mine {
			o.eng = eng
			n.signalLocked()
		}
		n.mu.Unlock()
		if !mine {
			eng.Close()
		}
		return
	}
}

func (n *Node) openEngine(k int, term uint64) (*engine.Engine, error) {
	be, err := n.cfg.Open(k, term)
	if err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	eng, err := engine.OpenBackend(be, n.cfg.Engine)
	if err != nil {
		be.Close()
		return nil, fmt.Errorf("engine: %w", err)
	}
	if c := n.cfg.CompatBucket; c != "" && n.PartitionOf(c) == k {
		if _, err := eng.CreateBucket(c); err != nil {
			eng.Close()
			return nil, fmt.Errorf("compat bucket %q: %w", c, err)
		}
	}
	return eng, nil
}

// release gives partition k up: requests stop at once, the engine closes in the background.
func (n *Node) release(k int, st *leaseState, why string) {
	o := st.held
	n.mu.Lock()
	valid := o.valid
	n.mu.Unlock()
	eng := n.drop(k, st)
	n.cfg.Logf("cluster: node %s released partition %d: %s", n.cfg.NodeID, k, why)
	go func() {
		n.stopWorker(k, o, valid)
		if eng != nil {
			eng.Close()
		}
	}()
}

// drop ends this node's ownership of k and returns its engine (nil: not open yet).
func (n *Node) drop(k int, st *leaseState) *engine.Engine {
	o := st.held
	st.held = nil
	close(o.gone)
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.owned, k)
	n.signalLocked()
	return o.eng
}

// releaseClean closes partition k's engine when owned, then deletes its lease, so that
// another node takes it over without waiting for the lease to lapse (a clean shutdown).
func (n *Node) releaseClean(k int, st *leaseState) {
	o := st.held
	if o == nil {
		return
	}
	eng := n.drop(k, st)
	n.stopWorker(k, o, time.Now().Add(5*time.Second))
	if eng != nil {
		if err := eng.Close(); err != nil {
			n.cfg.Logf("cluster: partition %d: close: %v", k, err)
			return
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	_ = n.kv.Delete(ctx, leaseKey(k), jetstream.LastRevision(o.rev))
	cancel()
}

// expire stops serving partition k once its validity has passed without renewal; the
// ownership is kept (a later renewal resumes it) until the lease moves on.
func (n *Node) expire(k int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if o := n.owned[k]; o != nil && time.Now().After(o.valid) {
		n.signalLocked()
	}
}

// observe records the holder last seen for partition k (for forwarding).
func (n *Node) observe(k int, h holder) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, mine := n.owned[k]; mine {
		return
	}
	if n.remote[k] != h {
		n.remote[k] = h
		n.signalLocked()
	}
}

func (n *Node) signalLocked() {
	close(n.changed)
	n.changed = make(chan struct{})
}

// route returns partition k's engine when this node serves it now, else the holder last
// seen (Node empty: none) and a channel closed at the next change of ownership.
func (n *Node) route(k int) (*engine.Engine, holder, <-chan struct{}) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if o := n.owned[k]; o != nil {
		if o.eng != nil && time.Now().Before(o.valid) {
			return o.eng, o.h, n.changed
		}
		return nil, holder{}, n.changed // ours, but opening or unrenewed: wait
	}
	return nil, n.remote[k], n.changed
}

// Owned returns the partitions this node serves now (for readiness and diagnostics).
func (n *Node) Owned() []int {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []int
	for k, o := range n.owned {
		if o.eng != nil && time.Now().Before(o.valid) {
			out = append(out, k)
		}
	}
	return out
}

// Close releases every owned partition (engines closed, leases deleted) and stops.
func (n *Node) Close() error {
	select {
	case <-n.stop:
	default:
		close(n.stop)
	}
	<-n.done
	if n.keys != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = n.keys.Stop(ctx)
	}
	return nil
}
