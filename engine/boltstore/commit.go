package boltstore

import (
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/dsd-project/dsd/engine/storage"
)

// Commit makes the group durable, all or nothing. A group of appends only (logged) is one
// record of the group log: one write and one fdatasync, checkpointed into the data file
// later. Any other group is applied to the data file in one transaction (one fsync),
// together with a checkpoint of every group logged before it. Errors: the log's or the
// transaction's, the same for every change; a failed checkpoint fails the next group
// until Probe succeeds (D4).
func (s *Store) Commit(group []storage.Change) []error {
	var err error
	if loggable(group) {
		err = s.commitLogged(group)
	} else {
		err = s.checkpoint(group)
	}
	out := make([]error, len(group))
	if err != nil {
		for i := range out {
			out[i] = err
		}
	}
	return out
}

func (s *Store) commitLogged(group []storage.Change) error {
	if p := s.ckErr.Load(); p != nil {
		return fmt.Errorf("boltstore: checkpoint: %w", *p)
	}
	if f := s.fault.Load(); f != nil {
		if err := (*f)(); err != nil {
			return err
		}
	}
	start := s.log.pos
	end, err := s.log.append(group)
	if err != nil {
		return err
	}
	size := int64(end.off - start.off)
	if end.seg != start.seg {
		size = int64(end.off)
	}
	s.logged(group, end, size)
	return nil
}

// loggable reports whether every change of group is append-shaped: messages, record
// index entries, producer state and receipt, metas. Those are what the layers index.
func loggable(group []storage.Change) bool {
	for i := range group {
		c := &group[i]
		if c.Bind != nil || c.PutSnapshot != nil || c.DropSnapshot != nil || c.Retained ||
			len(c.Unbind) > 0 || c.Bucket != nil || len(c.Subs) > 0 {
			return false
		}
		if p := c.Producer; p != nil && p.State == nil {
			return false
		}
	}
	return true
}

// applyGroup writes each change's parts in order, then the last meta of each
// incarnation: most appends leave the meta alone, and a meta changed by several changes
// of the group is encoded once.
func applyGroup(tx *bolt.Tx, group []storage.Change) error {
	metas := make(map[uint64]*storage.Meta)
	for i := range group {
		c := &group[i]
		if err := applyChange(tx, c); err != nil {
			return err
		}
		if c.Meta != nil {
			metas[c.Meta.ID] = c.Meta
		}
		for _, m := range c.Also {
			metas[m.ID] = m
		}
		for _, u := range c.Unbind {
			delete(metas, u.SID)
		}
	}
	metaB := tx.Bucket(bktMeta)
	for sid, m := range metas {
		if err := metaB.Put(sidKey(sid), encodeMeta(m)); err != nil {
			return err
		}
	}
	return nil
}

func applyChange(tx *bolt.Tx, c *storage.Change) error {
	sid := c.SID
	if b := c.Bind; b != nil {
		if err := tx.Bucket(bktNames).Put([]byte(b.Name), u64(b.SID)); err != nil {
			return err
		}
		if err := tx.Bucket(bktSystem).Put(keyNextSID, u64(b.SID)); err != nil {
			return err
		}
		if err := addBucketStreams(tx, b.Bucket, 1); err != nil {
			return err
		}
	}
	if p := c.PutSnapshot; p != nil {
		if err := tx.Bucket(bktSnaps).Put(snapKey(sid, p.Offset), p.Body); err != nil {
			return err
		}
	}
	if off := c.DropSnapshot; off != nil {
		if err := tx.Bucket(bktSnaps).Delete(snapKey(sid, *off)); err != nil {
			return err
		}
	}
	if err := putMessages(tx, sid, c); err != nil {
		return err
	}
	if p := c.Producer; p != nil {
		if r := p.Receipt; r != nil {
			if err := tx.Bucket(bktRcpts).Put(rcptKey(sid, p.ID, p.State.Epoch, r.Seq), encodeReceipt(r)); err != nil {
				return err
			}
		}
		if err := tx.Bucket(bktProds).Put(prodKey(sid, p.ID), encodeJSON(p.State)); err != nil {
			return err
		}
	}
	if c.Retained {
		if err := tx.Bucket(bktTrim).Put(sidKey(sid), nil); err != nil {
			return err
		}
	}
	for _, u := range c.Unbind {
		if err := unbind(tx, u); err != nil {
			return err
		}
	}
	if b := c.Bucket; b != nil {
		var err error
		if b.Record == nil {
			err = tx.Bucket(bktBuckets).Delete([]byte(b.ID))
		} else {
			err = tx.Bucket(bktBuckets).Put([]byte(b.ID), encodeJSON(b.Record))
		}
		if err != nil {
			return err
		}
	}
	for _, kv := range c.Subs {
		if err := applyKV(tx, kv); err != nil {
			return err
		}
	}
	return nil
}

// putMessages writes messages, and for JSON streams their record index entries
// (extension §6.1).
func putMessages(tx *bolt.Tx, sid uint64, c *storage.Change) error {
	if len(c.Messages) == 0 {
		return nil
	}
	data := tx.Bucket(bktData)
	data.FillPercent = 0.95
	var key [16]byte // Put copies the key (not the value): one key buffer serves all
	for _, m := range c.Messages {
		if err := data.Put(putPosKey(&key, sid, m.Off), m.Val); err != nil {
			return err
		}
	}
	if !c.Records {
		return nil
	}
	records := tx.Bucket(bktRecords)
	for i, m := range c.Messages {
		if err := records.Put(putPosKey(&key, sid, c.FirstRecord+uint64(i)), u64(m.Off)); err != nil {
			return err
		}
	}
	return nil
}

// unbind removes an incarnation's name (if still bound to it) and meta, and hands its
// storage to the sweeper.
func unbind(tx *bolt.Tx, u storage.Binding) error {
	names := tx.Bucket(bktNames)
	if v := names.Get([]byte(u.Name)); v != nil && getU64(v) == u.SID {
		if err := names.Delete([]byte(u.Name)); err != nil {
			return err
		}
		if err := addBucketStreams(tx, u.Bucket, -1); err != nil {
			return err
		}
	}
	if err := tx.Bucket(bktMeta).Delete(sidKey(u.SID)); err != nil {
		return err
	}
	return tx.Bucket(bktTrash).Put(sidKey(u.SID), encodeJSON(trashRecord{}))
}

// addBucketStreams adjusts a bucket's stored stream count.
func addBucketStreams(tx *bolt.Tx, id string, delta int) error {
	bk := tx.Bucket(bktBuckets)
	v := bk.Get([]byte(id))
	if v == nil {
		return nil
	}
	rec, err := decodeBucket(v)
	if err != nil {
		return err
	}
	rec.Streams = max(rec.Streams+delta, 0)
	return bk.Put([]byte(id), encodeJSON(rec))
}
