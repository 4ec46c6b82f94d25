package boltstore

import (
	"bytes"
	"sort"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/dsd-project/dsd/engine/storage"
	"github.com/dsd-project/dsd/model"
)

// Stream returns the meta of the incarnation bound to name, nil when none is.
func (s *Store) Stream(name string) (*storage.Meta, error) {
	var m *storage.Meta
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bktNames).Get([]byte(name))
		if v == nil {
			return nil
		}
		var err error
		m, err = loadMeta(tx, getU64(v))
		return err
	})
	return m, err
}

// Incarnation returns the meta of sid and whether its name is still bound to it.
func (s *Store) Incarnation(sid uint64) (m *storage.Meta, bound bool, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		if m, err = loadMeta(tx, sid); err != nil || m == nil {
			return err
		}
		v := tx.Bucket(bktNames).Get([]byte(m.Key()))
		bound = v != nil && getU64(v) == sid
		return nil
	})
	return m, bound, err
}

// SnapshotOf returns the meta of sid and its visible snapshot's body, in one transaction.
func (s *Store) SnapshotOf(sid uint64) (m *storage.Meta, body []byte, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		if m, err = loadMeta(tx, sid); err != nil || m == nil || m.Snapshot == nil {
			return err
		}
		body = bytes.Clone(tx.Bucket(bktSnaps).Get(snapKey(sid, m.Snapshot.Offset)))
		return nil
	})
	return m, body, err
}

// SnapshotBody returns the body stored for sid at off.
func (s *Store) SnapshotBody(sid, off uint64) (body []byte, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		body = bytes.Clone(tx.Bucket(bktSnaps).Get(snapKey(sid, off)))
		return nil
	})
	return body, err
}

// loadMeta reads an incarnation's meta and brings its derivable fields up to date: plain
// appends do not always rewrite the meta, so the tail and the record tail are taken from
// the last data and record entries when those lie beyond it.
func loadMeta(tx *bolt.Tx, sid uint64) (*storage.Meta, error) {
	v := tx.Bucket(bktMeta).Get(sidKey(sid))
	if v == nil {
		return nil, nil
	}
	m, err := decodeMeta(v)
	if err != nil {
		return nil, err
	}
	if k, val := lastPos(tx.Bucket(bktData), sid); k != nil {
		_, off := splitPosKey(k)
		m.Tail = max(m.Tail, off+uint64(len(val)-1))
	}
	if k, _ := lastPos(tx.Bucket(bktRecords), sid); k != nil {
		_, r := splitPosKey(k)
		m.RecordNext = max(m.RecordNext, r+1)
	}
	return m, nil
}

// lastPos returns the last sid|pos entry of sid in b, if any.
func lastPos(b *bolt.Bucket, sid uint64) ([]byte, []byte) {
	c := b.Cursor()
	k, v := c.Seek(posKey(sid+1, 0))
	if k == nil {
		k, v = c.Last()
	} else {
		k, v = c.Prev()
	}
	if k == nil || len(k) != 16 || getU64(k) != sid {
		return nil, nil
	}
	return k, v
}

// Messages visits whole messages in [start, tail) across segs within lim.
func (s *Store) Messages(segs []storage.Segment, start, tail uint64, lim storage.Limits, visit func(off uint64, val []byte)) error {
	return s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bktData).Cursor()
		taken, size := 0, 0
		first := true
		for _, sg := range segs {
			if sg.To <= start {
				continue
			}
			want := posKey(sg.SID, max(start, sg.From))
			k, val := c.Seek(want)
			if first && (k == nil || !bytes.Equal(k, want)) {
				return model.ErrOffsetNotBoundary
			}
			first = false
			for ; k != nil; k, val = c.Next() {
				sid, off := splitPosKey(k)
				if sid != sg.SID || off >= sg.To || off >= tail {
					break
				}
				if !lim.Allows(taken, size, len(val)-1) {
					return nil
				}
				if visit != nil {
					visit(off, val)
				}
				taken++
				size += len(val) - 1
			}
		}
		return nil
	})
}

// MessageAt returns the message of segs that holds off: a seek and one step back.
func (s *Store) MessageAt(segs []storage.Segment, off uint64) (start uint64, val []byte, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		for _, sg := range segs {
			if off < sg.From || off >= sg.To {
				continue
			}
			c := tx.Bucket(bktData).Cursor()
			k, v := c.Seek(posKey(sg.SID, off+1))
			if k == nil {
				k, v = c.Last()
			} else {
				k, v = c.Prev()
			}
			if k == nil {
				break
			}
			if sid, at := splitPosKey(k); sid == sg.SID && at >= sg.From && at+uint64(len(v)-1) > off {
				start, val = at, bytes.Clone(v)
				return nil
			}
			break
		}
		return model.ErrOffsetNotBoundary
	})
	return start, val, err
}

// RecordOffset returns the offset of record r of sid: one index lookup.
func (s *Store) RecordOffset(sid, r uint64) (off uint64, ok bool, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket(bktRecords).Get(posKey(sid, r)); v != nil {
			off, ok = getU64(v), true
		}
		return nil
	})
	return off, ok, err
}

// OrdinalAt binary-searches the record index of sid in [lo, hi) for the first record at
// or after off.
func (s *Store) OrdinalAt(sid, lo, hi, off uint64) (rec uint64, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bktRecords)
		i := sort.Search(int(hi-lo), func(i int) bool {
			v := b.Get(posKey(sid, lo+uint64(i)))
			return v == nil || getU64(v) >= off
		})
		rec = lo + uint64(i)
		return nil
	})
	return rec, err
}

// Producer returns a producer's stored state, nil when unknown.
func (s *Store) Producer(sid uint64, id string) (st *storage.ProducerState, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket(bktProds).Get(prodKey(sid, id)); v != nil {
			st, err = decodeProducer(v)
		}
		return err
	})
	return st, err
}

// Receipt returns the stored acknowledgement of p's (epoch, seq).
func (s *Store) Receipt(sid uint64, p model.Producer) (r storage.Receipt, ok bool, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		r, ok = decodeReceipt(p.Seq, tx.Bucket(bktRcpts).Get(rcptKey(sid, p.ID, p.Epoch, p.Seq)))
		return nil
	})
	return r, ok, err
}

// Names visits bound names with prefix from seek, with their metas.
func (s *Store) Names(prefix, seek string, visit func(name string, m *storage.Meta) bool) error {
	if seek < prefix {
		seek = prefix
	}
	return s.db.View(func(tx *bolt.Tx) error {
		c, meta := tx.Bucket(bktNames).Cursor(), tx.Bucket(bktMeta)
		for k, v := c.Seek([]byte(seek)); k != nil && strings.HasPrefix(string(k), prefix); k, v = c.Next() {
			if meta.Get(v) == nil {
				continue
			}
			m, err := loadMeta(tx, getU64(v))
			if err != nil {
				return err
			}
			if !visit(string(k), m) {
				return nil
			}
		}
		return nil
	})
}

// Bucket returns a bucket's record, nil when it does not exist.
func (s *Store) Bucket(id string) (rec *storage.BucketRecord, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket(bktBuckets).Get([]byte(id)); v != nil {
			rec, err = decodeBucket(v)
		}
		return err
	})
	return rec, err
}
