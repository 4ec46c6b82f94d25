package jsstore

import (
	"errors"

	"github.com/dsd-project/dsd/engine/storage"
)

// ErrSubscriptionsUnsupported: this backend does not store subscription records yet
// (storage.Change.Subs); dsd runs subscriptions on the bbolt backend only. A group that
// writes any is refused whole, nothing applied; deletes (a nil Value, such as a bucket
// delete's clean-up of its subscriptions) delete nothing here and pass.
var ErrSubscriptionsUnsupported = errors.New("jsstore: subscription records are not supported by the JetStream backend yet")

func subsUnsupported(group []storage.Change) error {
	for i := range group {
		for _, p := range group[i].Subs {
			if p.Value != nil {
				return ErrSubscriptionsUnsupported
			}
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
