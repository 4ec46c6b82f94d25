package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/dsd-project/dsd/subs"
)

// keysKey is the control bucket's key of the subscription signing and token keys (base
// protocol §6.5, D10): one set for the whole cluster, so every node serves the same JWKS
// and verifies every callback and claim token.
const keysKey = "subs.sign_keys"

// ErrKeysRaced: another node created the keys first; loading again returns them.
var ErrKeysRaced = errors.New("cluster: the subscription keys were created by another node meanwhile; retry")

// kvKeys is the cluster's subs.KeyStore on the control bucket. Keys are only ever
// created (subs generates what is missing, once), never rewritten, so the first node's
// keys are every node's.
type kvKeys struct{ kv jetstream.KeyValue }

// LoadKeys returns the cluster's keys, the zero Keys before the first node made them.
func (s kvKeys) LoadKeys(ctx context.Context) (subs.Keys, error) {
	e, err := s.kv.Get(ctx, keysKey)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return subs.Keys{}, nil
	}
	if err != nil {
		return subs.Keys{}, err
	}
	var k subs.Keys
	if err := json.Unmarshal(e.Value(), &k); err != nil {
		return subs.Keys{}, fmt.Errorf("cluster: %s: %w", keysKey, err)
	}
	return k, nil
}

// SaveKeys creates the cluster's keys. Errors: ErrKeysRaced when they exist already.
func (s kvKeys) SaveKeys(ctx context.Context, k subs.Keys) error {
	b, err := json.Marshal(k)
	if err != nil {
		return err
	}
	if _, err := s.kv.Create(ctx, keysKey, b); err != nil {
		if errors.Is(err, jetstream.ErrKeyExists) {
			return ErrKeysRaced
		}
		return err
	}
	return nil
}

// keysOnly is the Store of the node's key worker: it holds no subscriptions and serves
// the JWKS and kid (every partition's worker loads the same keys).
type keysOnly struct{ kvKeys }

func (keysOnly) Subscriptions(context.Context) ([]subs.Subscription, error) { return nil, nil }

func (keysOnly) Subscription(context.Context, subs.Key) (subs.Subscription, error) {
	return subs.Subscription{}, subs.ErrNotFound
}

func (keysOnly) Links(context.Context, subs.Key) ([]subs.Link, error) { return nil, subs.ErrNotFound }

func (keysOnly) Commit(context.Context, subs.Change) error { return subs.ErrNotFound }
