package boltstore

import (
	"bytes"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/dsd-project/dsd/engine/storage"
)

// The subscription key spaces (storage.Space*) and their bbolt buckets; the keys space
// lives in the system bucket ("sign_keys").
func spaceBucket(tx *bolt.Tx, space string) (*bolt.Bucket, error) {
	switch space {
	case storage.SpaceSubs:
		return tx.Bucket(bktSubs), nil
	case storage.SpaceLinks:
		return tx.Bucket(bktLinks), nil
	case storage.SpaceKeys:
		return tx.Bucket(bktSystem), nil
	}
	return nil, fmt.Errorf("boltstore: unknown key space %q", space)
}

// applyKV writes one subscription key (storage.KVPut).
func applyKV(tx *bolt.Tx, kv storage.KVPut) error {
	b, err := spaceBucket(tx, kv.Space)
	if err != nil {
		return err
	}
	switch {
	case kv.Prefix:
		c := b.Cursor()
		for k, _ := c.Seek(kv.Key); k != nil && bytes.HasPrefix(k, kv.Key); k, _ = c.Seek(kv.Key) {
			if err := c.Delete(); err != nil {
				return err
			}
		}
		return nil
	case kv.Value == nil:
		return b.Delete(kv.Key)
	}
	return b.Put(kv.Key, kv.Value)
}

// KV returns the value at key in a subscription space, nil when absent.
func (s *Store) KV(space string, key []byte) (val []byte, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		b, err := spaceBucket(tx, space)
		if err != nil {
			return err
		}
		if v := b.Get(key); v != nil {
			val = bytes.Clone(v)
		}
		return nil
	})
	return val, err
}

// KVScan visits the keys of a subscription space starting with prefix, in byte order.
func (s *Store) KVScan(space string, prefix []byte, visit func(key, value []byte) bool) error {
	return s.db.View(func(tx *bolt.Tx) error {
		b, err := spaceBucket(tx, space)
		if err != nil {
			return err
		}
		c := b.Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			if !visit(bytes.Clone(k), bytes.Clone(v)) {
				return nil
			}
		}
		return nil
	})
}
