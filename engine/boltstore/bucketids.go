package boltstore

import bolt "go.etcd.io/bbolt"

// BucketIDs returns up to limit bucket ids strictly after after, in byte order.
func (s *Store) BucketIDs(after string, limit int) ([]string, error) {
	var ids []string
	err := s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bktBuckets).Cursor()
		k, _ := c.First()
		if after != "" {
			k, _ = c.Seek(append([]byte(after), 0))
		}
		for ; k != nil && len(ids) < limit; k, _ = c.Next() {
			ids = append(ids, string(k))
		}
		return nil
	})
	return ids, err
}
