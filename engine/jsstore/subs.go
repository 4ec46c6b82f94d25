package jsstore

import (
	"errors"

	"github.com/dsd-project/dsd/engine/storage"
)

// ErrSubscriptionsUnsupported: this backend does not store subscription records yet
// (storage.Change.Subs); dsd runs subscriptions on the bbolt backend only. A group that
// carries any is refused whole, nothing applied.
var ErrSubscriptionsUnsupported = errors.New("jsstore: subscription records are not supported by the JetStream backend yet")

func subsUnsupported(group []storage.Change) error {
	for i := range group {
		if len(group[i].Subs) > 0 {
			return ErrSubscriptionsUnsupported
		}
	}
	return nil
}

// KV finds nothing: no subscription records are stored here (ErrSubscriptionsUnsupported).
func (s *Store) KV(space string, key []byte) ([]byte, error) { return nil, nil }

// KVScan visits nothing (ErrSubscriptionsUnsupported).
func (s *Store) KVScan(space string, prefix []byte, visit func(key, value []byte) bool) error {
	return nil
}
