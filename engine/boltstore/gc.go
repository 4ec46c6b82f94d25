package boltstore

import (
	bolt "go.etcd.io/bbolt"
)

// Trash returns up to limit deleted incarnations whose storage is still to free.
func (s *Store) Trash(limit int) ([]uint64, error) {
	return s.markers(bktTrash, limit)
}

// Trims returns the incarnations marked for trimming.
func (s *Store) Trims() ([]uint64, error) {
	return s.markers(bktTrim, 0)
}

func (s *Store) markers(bkt []byte, limit int) ([]uint64, error) {
	var sids []uint64
	err := s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bkt).Cursor()
		for k, _ := c.First(); k != nil && (limit == 0 || len(sids) < limit); k, _ = c.Next() {
			sids = append(sids, getU64(k))
		}
		return nil
	})
	return sids, err
}

// Collect deletes up to limit keys of a deleted incarnation in a transaction of its own;
// finished reports that nothing is left and the trash entry is gone.
func (s *Store) Collect(sid uint64, limit int) (finished bool, err error) {
	err = s.db.Update(func(tx *bolt.Tx) error {
		finished, err = freeSID(tx, sid, limit)
		return err
	})
	return finished && err == nil, err
}

func freeSID(tx *bolt.Tx, sid uint64, limit int) (finished bool, err error) {
	n := 0
	for _, name := range [][]byte{bktData, bktRecords, bktProds, bktRcpts, bktSnaps} {
		c := tx.Bucket(name).Cursor()
		prefix := sidKey(sid)
		for k, _ := c.Seek(prefix); k != nil && len(k) >= 8 && getU64(k) == sid; k, _ = c.Seek(prefix) {
			if n >= limit {
				return false, nil
			}
			if err := c.Delete(); err != nil {
				return false, err
			}
			n++
		}
	}
	return true, tx.Bucket(bktTrash).Delete(sidKey(sid))
}

// Trim deletes up to limit data and record keys of sid below its stored retention
// boundary in a transaction of its own; finished reports the trim marker is gone. A
// stream referenced by forks keeps its data (its forks may read it).
func (s *Store) Trim(sid uint64, limit int) (finished bool, err error) {
	err = s.db.Update(func(tx *bolt.Tx) error {
		finished, err = trimTx(tx, sid, limit)
		return err
	})
	return finished && err == nil, err
}

func trimTx(tx *bolt.Tx, sid uint64, limit int) (finished bool, err error) {
	m, err := loadMeta(tx, sid)
	if err != nil {
		return false, err
	}
	if m == nil {
		return true, tx.Bucket(bktTrim).Delete(sidKey(sid))
	}
	if m.Refs > 0 {
		return true, nil
	}
	n := 0
	for _, b := range []struct {
		name  []byte
		below uint64
	}{{bktData, m.RetainedFrom}, {bktRecords, m.RecordFirst}} {
		c := tx.Bucket(b.name).Cursor()
		start := posKey(sid, 0)
		for k, _ := c.Seek(start); k != nil; k, _ = c.Seek(start) {
			ksid, pos := splitPosKey(k)
			if ksid != sid || pos >= b.below {
				break
			}
			if n >= limit {
				return false, nil
			}
			if err := c.Delete(); err != nil {
				return false, err
			}
			n++
		}
	}
	return true, tx.Bucket(bktTrim).Delete(sidKey(sid))
}
