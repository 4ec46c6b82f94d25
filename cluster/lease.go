package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Lease timing (design/distributed.md §4.1). An owner renews every renewEvery; it serves
// until its last successful renewal's send time + leaseTTL - leaseMargin. A taker must see
// one revision unchanged for leaseTTL + leaseMargin on its own monotonic clock before it
// takes the lease by compare-and-set, so the old owner has stopped serving by then as long
// as clock rates drift by less than 2*leaseMargin per leaseTTL.
const (
	leaseTTL    = 6 * time.Second
	leaseMargin = time.Second
	renewEvery  = leaseTTL / 3
)

// holder is the value of the lease key "lease.<k>" in the control bucket.
type holder struct {
	Node string `json:"node"` // node id
	Addr string `json:"addr"` // the node's HTTP listener (host:port)
	Term uint64 `json:"term"` // increases with every change of holder
}

func leaseKey(k int) string { return fmt.Sprintf("lease.%d", k) }

// observed is what a node last saw of a lease it does not hold.
type observed struct {
	rev   uint64
	h     holder
	since time.Time // when rev was first seen (monotonic)
}

// leaseState is a node's view of one partition's lease.
type leaseState struct {
	obs observed
	// held: this node's ownership, nil when it does not own the partition.
	held *owned
}

// readLease returns the lease's holder and revision (rev 0: no lease).
func readLease(ctx context.Context, kv jetstream.KeyValue, k int) (holder, uint64, error) {
	e, err := kv.Get(ctx, leaseKey(k))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return holder{}, 0, nil
	}
	if err != nil {
		return holder{}, 0, err
	}
	var h holder
	if err := json.Unmarshal(e.Value(), &h); err != nil {
		return holder{}, 0, fmt.Errorf("cluster: lease %d: %w", k, err)
	}
	return h, e.Revision(), nil
}

// writeLease creates (rev 0) or compare-and-sets the lease; it returns the new revision.
func writeLease(ctx context.Context, kv jetstream.KeyValue, k int, h holder, rev uint64) (uint64, error) {
	b, _ := json.Marshal(h)
	if rev == 0 {
		return kv.Create(ctx, leaseKey(k), b)
	}
	return kv.Update(ctx, leaseKey(k), b, rev)
}

// stepLease advances partition k's lease by one tick: renew it when held, take it when
// free or abandoned (unchanged for leaseTTL + leaseMargin).
func (n *Node) stepLease(ctx context.Context, k int, st *leaseState) {
	now := time.Now()
	if o := st.held; o != nil {
		if now.Sub(o.sentAt) < renewEvery {
			return
		}
		sent := time.Now()
		rev, err := writeLease(ctx, n.kv, k, o.h, o.rev)
		if err == nil {
			n.mu.Lock()
			o.renewed(rev, sent)
			n.mu.Unlock()
			return
		}
		// Unrenewed: keep serving until the validity ends; give the partition up only
		// when the lease has moved on (another revision or holder).
		h, cur, rerr := readLease(ctx, n.kv, k)
		if rerr == nil && (cur != o.rev || h.Node != n.cfg.NodeID) {
			n.release(k, st, fmt.Sprintf("lease taken by %s", h.Node))
		}
		return
	}
	h, rev, err := readLease(ctx, n.kv, k)
	if err != nil {
		return
	}
	if rev != st.obs.rev || rev == 0 && st.obs.since.IsZero() {
		st.obs = observed{rev: rev, h: h, since: now}
	}
	// A lease this node held before a restart ages like anyone's: its old incarnation
	// may still have been serving until the revision's validity ended.
	wait := leaseTTL + leaseMargin
	if rev == 0 {
		wait = n.createDelay(k)
	}
	if now.Sub(st.obs.since) < wait {
		return
	}
	next := holder{Node: n.cfg.NodeID, Addr: n.cfg.Addr, Term: h.Term + 1}
	sent := time.Now()
	nrev, err := writeLease(ctx, n.kv, k, next, rev)
	if err != nil {
		return
	}
	n.acquire(k, st, next, nrev, sent)
}

// createDelay is how long a node waits before creating a lease nobody holds: 0 for the
// partition's preferred node, more for others, so that partitions spread over nodes.
func (n *Node) createDelay(k int) time.Duration {
	if n.cfg.Peers <= 1 || k%n.cfg.Peers == n.cfg.Rank%n.cfg.Peers {
		return 0
	}
	return 2 * time.Second
}

// LeaseHolder returns the node holding partition k's lease ("" when none), as stored.
func LeaseHolder(ctx context.Context, kv jetstream.KeyValue, k int) (string, error) {
	h, _, err := readLease(ctx, kv, k)
	return h.Node, err
}
