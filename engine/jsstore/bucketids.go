package jsstore

import "slices"

// BucketIDs returns up to limit bucket ids strictly after after, in byte order, over the
// partitions open here (a cluster merges the owners' pages).
func (s *Store) BucketIDs(after string, limit int) ([]string, error) {
	s.mu.RLock()
	var ids []string
	for _, p := range s.parts {
		for id, e := range p.buckets {
			if e.Rec != nil && id > after {
				ids = append(ids, id)
			}
		}
	}
	s.mu.RUnlock()
	slices.Sort(ids)
	if len(ids) > limit {
		ids = ids[:limit]
	}
	return ids, nil
}
