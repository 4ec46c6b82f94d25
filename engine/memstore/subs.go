package memstore

import (
	"bytes"
	"slices"
	"strings"

	"github.com/dsd-project/dsd/engine/storage"
)

// applyKV writes one subscription key (storage.KVPut). d.mu is held.
func (d *state) applyKV(kv storage.KVPut) {
	sp := d.kv[kv.Space]
	if sp == nil {
		sp = map[string][]byte{}
		d.kv[kv.Space] = sp
	}
	switch {
	case kv.Prefix:
		for k := range sp {
			if strings.HasPrefix(k, string(kv.Key)) {
				delete(sp, k)
			}
		}
	case kv.Value == nil:
		delete(sp, string(kv.Key))
	default:
		sp[string(kv.Key)] = bytes.Clone(kv.Value)
	}
}

// KV returns the value at key in a subscription space, nil when absent.
func (s *Store) KV(space string, key []byte) (val []byte, err error) {
	err = s.read(func(d *state) error {
		if v, ok := d.kv[space][string(key)]; ok {
			val = bytes.Clone(v)
		}
		return nil
	})
	return val, err
}

// KVScan visits the keys of a subscription space starting with prefix, in byte order.
func (s *Store) KVScan(space string, prefix []byte, visit func(key, value []byte) bool) error {
	type kv struct {
		k string
		v []byte
	}
	var found []kv
	err := s.read(func(d *state) error {
		for k, v := range d.kv[space] {
			if strings.HasPrefix(k, string(prefix)) {
				found = append(found, kv{k, bytes.Clone(v)})
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	slices.SortFunc(found, func(a, b kv) int { return strings.Compare(a.k, b.k) })
	for _, e := range found {
		if !visit([]byte(e.k), e.v) {
			break
		}
	}
	return nil
}
