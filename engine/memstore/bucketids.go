package memstore

import (
	"maps"
	"slices"
)

// BucketIDs returns up to limit bucket ids strictly after after, in byte order.
func (s *Store) BucketIDs(after string, limit int) ([]string, error) {
	var ids []string
	err := s.read(func(d *state) error {
		for _, id := range slices.Sorted(maps.Keys(d.buckets)) {
			if id > after && len(ids) < limit {
				ids = append(ids, id)
			}
		}
		return nil
	})
	return ids, err
}
