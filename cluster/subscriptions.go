package cluster

import (
	"context"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/httpd"
	"github.com/dsd-project/dsd/model"
	"github.com/dsd-project/dsd/subs"
)

// The __ds routes on a node (base protocol §6-§7): the Forwarder sends a bucket's routes
// to the owner of its partition like any other, where Store's subscription methods go to
// the partition's engine and Subscriptions' delivery actions to its worker. The root
// /__ds/jwks.json is served by every node from the cluster's keys.

var (
	_ httpd.SubscriptionStore  = Store{}
	_ httpd.SubscriptionWorker = Subscriptions{}
)

// PutSubscription creates or re-confirms a subscription (base protocol §6.3).
func (s Store) PutSubscription(key subs.Key, c engine.SubscriptionCreate) (engine.SubscriptionDoc, bool, error) {
	e, err := s.engine(key.Bucket)
	if err != nil {
		return engine.SubscriptionDoc{}, false, err
	}
	return e.PutSubscription(key, c)
}

// SubscriptionDocument returns a live subscription's document (base protocol §6.3).
func (s Store) SubscriptionDocument(key subs.Key) (engine.SubscriptionDoc, error) {
	e, err := s.engine(key.Bucket)
	if err != nil {
		return engine.SubscriptionDoc{}, err
	}
	return e.SubscriptionDocument(key)
}

// DeleteSubscription deletes a subscription (base protocol §6.3).
func (s Store) DeleteSubscription(key subs.Key) error {
	e, err := s.engine(key.Bucket)
	if err != nil {
		return err
	}
	return e.DeleteSubscription(key)
}

// AddSubscriptionStreams links streams explicitly (base protocol §6.4).
func (s Store) AddSubscriptionStreams(key subs.Key, paths []string) error {
	e, err := s.engine(key.Bucket)
	if err != nil {
		return err
	}
	return e.AddSubscriptionStreams(key, paths)
}

// RemoveSubscriptionStream removes an explicit link (base protocol §6.4).
func (s Store) RemoveSubscriptionStream(key subs.Key, path string) error {
	e, err := s.engine(key.Bucket)
	if err != nil {
		return err
	}
	return e.RemoveSubscriptionStream(key, path)
}

// Subscriptions is the node's httpd.SubscriptionWorker: each call goes to the worker of
// its bucket's partition when it runs here, else fails with model.ErrShuttingDown (503,
// Retry-After: the partition is changing owner).
type Subscriptions struct{ n *Node }

// Subscriptions returns the node's delivery actions (nil Config.Subscriptions: none).
func (n *Node) Subscriptions() httpd.SubscriptionWorker {
	if n.cfg.Subscriptions == nil {
		return nil
	}
	return Subscriptions{n}
}

func (s Subscriptions) worker(bucket string) (*subs.Worker, error) {
	s.n.mu.Lock()
	defer s.n.mu.Unlock()
	if w := s.n.workers[s.n.PartitionOf(bucket)]; w != nil {
		return w, nil
	}
	return nil, model.ErrShuttingDown
}

// SubscriptionChanged tells the partition's worker (one that is not running derives the
// change when it starts).
func (s Subscriptions) SubscriptionChanged(key subs.Key) {
	if w, err := s.worker(key.Bucket); err == nil {
		w.SubscriptionChanged(key)
	}
}

// Callback is a webhook's callback (base protocol §7.1).
func (s Subscriptions) Callback(ctx context.Context, key subs.Key, bearer string, req subs.AckRequest) (subs.AckReply, error) {
	w, err := s.worker(key.Bucket)
	if err != nil {
		return subs.AckReply{}, err
	}
	return w.Callback(ctx, key, bearer, req)
}

// Claim claims a pull-wake subscription's wake (base protocol §7.2).
func (s Subscriptions) Claim(ctx context.Context, key subs.Key, worker string) (subs.ClaimReply, error) {
	w, err := s.worker(key.Bucket)
	if err != nil {
		return subs.ClaimReply{}, err
	}
	return w.Claim(ctx, key, worker)
}

// Ack acknowledges a claimed wake (base protocol §7.2).
func (s Subscriptions) Ack(ctx context.Context, key subs.Key, bearer string, req subs.AckRequest) (subs.AckReply, error) {
	w, err := s.worker(key.Bucket)
	if err != nil {
		return subs.AckReply{}, err
	}
	return w.Ack(ctx, key, bearer, req)
}

// Release gives a claimed wake back (base protocol §7.2).
func (s Subscriptions) Release(ctx context.Context, key subs.Key, bearer string, req subs.ReleaseRequest) error {
	w, err := s.worker(key.Bucket)
	if err != nil {
		return err
	}
	return w.Release(ctx, key, bearer, req)
}

// JWKS is the cluster's public signing keys (base protocol §6.5).
func (s Subscriptions) JWKS() []byte { return s.n.keys.JWKS() }

// KeyID is the kid of the cluster's active signing key.
func (s Subscriptions) KeyID() string { return s.n.keys.KeyID() }
