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
	return s.batch(func(tx *bolt.Tx) (bool, error) { return freeSID(tx, sid, limit) })
}

// batch runs one clean-up step in a transaction of its own.
func (s *Store) batch(step func(tx *bolt.Tx) (bool, error)) (finished bool, err error) {
	err = s.db.Update(func(tx *bolt.Tx) error {
		finished, err = step(tx)
		return err
	})
	return finished && err == nil, err
}

func freeSID(tx *bolt.Tx, sid uint64, limit int) (finished bool, err error) {
	n := 0
	prefix := sidKey(sid)
	ofSID := func(k []byte) bool { return len(k) >= 8 && getU64(k) == sid }
	for _, name := range [][]byte{bktData, bktRecords, bktProds, bktRcpts, bktSnaps} {
		if full, err := deleteRun(tx.Bucket(name), prefix, ofSID, &n, limit); full || err != nil {
			return false, err
		}
	}
	return true, tx.Bucket(bktTrash).Delete(sidKey(sid))
}

// deleteRun deletes the keys of b from seek on while more holds, counting them in n up
// to limit; full reports that it stopped at the limit.
func deleteRun(b *bolt.Bucket, seek []byte, more func(k []byte) bool, n *int, limit int) (full bool, err error) {
	c := b.Cursor()
	for k, _ := c.Seek(seek); k != nil && more(k); k, _ = c.Seek(seek) {
		if *n >= limit {
			return true, nil
		}
		if err := c.Delete(); err != nil {
			return false, err
		}
		*n++
	}
	return false, nil
}

// Trim deletes up to limit data and record keys of sid below its stored retention
// boundary in a transaction of its own; finished reports the trim marker is gone. A
// stream referenced by forks keeps its data (its forks may read it).
func (s *Store) Trim(sid uint64, limit int) (finished bool, err error) {
	return s.batch(func(tx *bolt.Tx) (bool, error) { return trimTx(tx, sid, limit) })
}

func trimTx(tx *bolt.Tx, sid uint64, limit int) (finished bool, err error) {
	m, err := loadMeta(tx, view{}, sid)
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
		below := func(k []byte) bool {
			ksid, pos := splitPosKey(k)
			return ksid == sid && pos < b.below
		}
		if full, err := deleteRun(tx.Bucket(b.name), posKey(sid, 0), below, &n, limit); full || err != nil {
			return false, err
		}
	}
	return true, tx.Bucket(bktTrim).Delete(sidKey(sid))
}
