package engine

import bolt "go.etcd.io/bbolt"

// Counts returns how many buckets and streams (paths bound to a live incarnation) the data
// file holds, for the operator's metrics (D12). It walks two bbolt buckets' pages: call it
// per scrape, not per request.
func (e *Engine) Counts() (buckets, streams int, err error) {
	err = e.db.View(func(tx *bolt.Tx) error {
		buckets = tx.Bucket(bktBuckets).Stats().KeyN
		streams = tx.Bucket(bktNames).Stats().KeyN
		return nil
	})
	return buckets, streams, err
}
