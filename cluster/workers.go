package cluster

import (
	"context"
	"fmt"
	"time"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/subs"
)

// Subscription delivery in a cluster (base protocol §6-§7, D10, D11): the deliveries of a
// bucket's subscriptions run on the node that serves the bucket's partition, one
// subs.Worker per partition over the partition's engine, whose records (cursors, retry
// schedule, outstanding wake) are stored in the partition's stream. The worker runs only
// while the lease is valid with workerMargin to spare, and is stopped (its attempts in
// flight cancelled at the lease's validity at the latest) before a taker may start: a
// taker waits leaseTTL + leaseMargin after the last renewal it saw, the owner stops
// serving at leaseTTL - leaseMargin after it. The new owner's worker starts from the
// stored state: pending work, outstanding wakes and their next attempt times. An attempt
// the old owner made and could not record is made again (at-least-once, §7.1).

// workerMargin is how long before the lease's validity ends a partition's worker is
// stopped (so that its last commits land while the lease is valid); workerPoll is how
// often ownership is checked.
const (
	workerMargin = time.Second
	workerPoll   = 100 * time.Millisecond
)

// partitionStore is a partition's subs.Store: its engine, with the cluster's keys.
type partitionStore struct {
	*engine.Engine
	kvKeys
}

// LoadKeys returns the cluster's keys (subs.KeyStore).
func (p partitionStore) LoadKeys(ctx context.Context) (subs.Keys, error) {
	return p.kvKeys.LoadKeys(ctx)
}

// SaveKeys creates the cluster's keys (subs.KeyStore).
func (p partitionStore) SaveKeys(ctx context.Context, k subs.Keys) error {
	return p.kvKeys.SaveKeys(ctx, k)
}

// superviseWorker runs partition k's worker while ownership o lasts: started once the
// engine is open and the lease valid, stopped when the validity nears its end (started
// again after a renewal) and when the ownership ends.
func (n *Node) superviseWorker(k int, o *owned) {
	t := time.NewTicker(workerPoll)
	defer t.Stop()
	var retryAt time.Time
	for {
		select {
		case <-o.gone:
			n.stopWorker(k, o, time.Now().Add(5*time.Second))
			return
		case <-t.C:
		}
		n.mu.Lock()
		eng, valid := o.eng, o.valid
		n.mu.Unlock()
		serving := eng != nil && time.Now().Before(valid.Add(-workerMargin))
		switch {
		case !serving:
			n.stopWorker(k, o, valid)
		case time.Now().After(retryAt):
			if err := n.startWorker(k, o, eng); err != nil {
				n.cfg.Logf("cluster: partition %d: subscriptions: %v (retrying)", k, err)
				retryAt = time.Now().Add(time.Second)
			}
		}
	}
}

// startWorker starts o's worker when none runs (o.wmu serializes start and stop).
func (n *Node) startWorker(k int, o *owned, eng *engine.Engine) error {
	o.wmu.Lock()
	defer o.wmu.Unlock()
	select {
	case <-o.gone:
		return nil
	default:
	}
	if o.worker != nil {
		return nil
	}
	opts := *n.cfg.Subscriptions
	opts.Store = partitionStore{Engine: eng, kvKeys: kvKeys{n.kv}}
	w, err := subs.New(opts)
	if err != nil {
		return err
	}
	eng.SetStreamObserver(w.StreamChanged)
	ctx, cancel := context.WithTimeout(context.Background(), renewEvery)
	defer cancel()
	if err := w.Start(ctx); err != nil {
		eng.SetStreamObserver(func(string, string) {})
		return err
	}
	o.worker = w
	n.mu.Lock()
	n.workers[k] = w
	n.mu.Unlock()
	n.cfg.Logf("cluster: node %s delivers partition %d's subscriptions (term %d)", n.cfg.NodeID, k, o.h.Term)
	return nil
}

// stopWorker stops o's worker, if one runs: no new attempt at once, those in flight
// cancelled at deadline.
func (n *Node) stopWorker(k int, o *owned, deadline time.Time) {
	o.wmu.Lock()
	defer o.wmu.Unlock()
	w := o.worker
	if w == nil {
		return
	}
	o.worker = nil
	n.mu.Lock()
	if n.workers[k] == w {
		delete(n.workers, k)
	}
	eng := o.eng
	n.mu.Unlock()
	if eng != nil {
		eng.SetStreamObserver(func(string, string) {})
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	if err := w.Stop(ctx); err != nil {
		n.cfg.Logf("cluster: partition %d: subscription attempts cancelled at the lease's end: %v", k, err)
	}
	n.cfg.Logf("cluster: node %s stopped partition %d's subscriptions", n.cfg.NodeID, k)
}

// startKeys starts the node's key worker (the JWKS and kid of the __ds routes), creating
// the cluster's keys when no node has yet; it retries for up to a minute (the creation
// race, JetStream starting).
func (n *Node) startKeys() error {
	deadline := time.Now().Add(time.Minute)
	for {
		opts := *n.cfg.Subscriptions
		opts.Store = keysOnly{kvKeys{n.kv}}
		w, err := subs.New(opts)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = w.Start(ctx)
		cancel()
		if err == nil {
			n.keys = w
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cluster: subscription keys: %w", err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
