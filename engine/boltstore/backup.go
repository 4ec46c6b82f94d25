package boltstore

import (
	"io"

	bolt "go.etcd.io/bbolt"
)

// Backup writes a consistent copy of the data file to w while it is in use: one read
// transaction, so writers are not blocked (while it lasts the file cannot be remapped: a
// file growing past its mapping, 1 GiB at first, delays commits until the copy ends). The
// copy holds every group committed before the call: it checkpoints the group log first,
// so the copy is complete without the log. size, when set, gets the copy's size in bytes
// before the first byte is written. Errors: the checkpoint's, w's, IO.
func (s *Store) Backup(w io.Writer, size func(int64)) (int64, error) {
	if err := s.checkpoint(nil); err != nil {
		return 0, err
	}
	var n int64
	err := s.db.View(func(tx *bolt.Tx) error {
		if size != nil {
			size(tx.Size())
		}
		var err error
		n, err = tx.WriteTo(w)
		return err
	})
	return n, err
}

// Counts returns how many buckets and bound stream names the file holds. It walks two
// bbolt buckets' pages: for a metrics scrape, not per request.
func (s *Store) Counts() (buckets, streams int, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		buckets = tx.Bucket(bktBuckets).Stats().KeyN
		streams = tx.Bucket(bktNames).Stats().KeyN
		return nil
	})
	return buckets, streams, err
}
