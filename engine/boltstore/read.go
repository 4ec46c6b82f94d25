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
	ov := s.view()
	err := s.db.View(func(tx *bolt.Tx) error {
		ov := ov.in(tx)
		v := tx.Bucket(bktNames).Get([]byte(name))
		if v == nil {
			return nil
		}
		var err error
		m, err = loadMeta(tx, ov, getU64(v))
		return err
	})
	return m, err
}

// Incarnation returns the meta of sid and whether its name is still bound to it.
func (s *Store) Incarnation(sid uint64) (m *storage.Meta, bound bool, err error) {
	ov := s.view()
	err = s.db.View(func(tx *bolt.Tx) error {
		ov := ov.in(tx)
		if m, err = loadMeta(tx, ov, sid); err != nil || m == nil {
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
	ov := s.view()
	err = s.db.View(func(tx *bolt.Tx) error {
		ov := ov.in(tx)
		if m, err = loadMeta(tx, ov, sid); err != nil || m == nil || m.Snapshot == nil {
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

// loadMeta reads an incarnation's meta, the newest logged one (ov) before the stored
// one, and brings its derivable fields up to date: plain appends do not always rewrite
// the meta, so the tail and the record tail are taken from the last data and record
// entries, logged or stored, when those lie beyond it.
func loadMeta(tx *bolt.Tx, ov view, sid uint64) (*storage.Meta, error) {
	lm, ltail, lrec := ov.metaOf(sid)
	var m *storage.Meta
	if lm != nil {
		c := *lm
		m = &c
	} else {
		v := tx.Bucket(bktMeta).Get(sidKey(sid))
		if v == nil {
			return nil, nil
		}
		var err error
		if m, err = decodeMeta(v); err != nil {
			return nil, err
		}
	}
	m.Tail, m.RecordNext = max(m.Tail, ltail), max(m.RecordNext, lrec)
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

// Messages visits whole messages in [start, tail) across segs within lim: the stored
// ones merged in offset order with the logged ones (ov), which win on equal offsets.
func (s *Store) Messages(segs []storage.Segment, start, tail uint64, lim storage.Limits, visit func(off uint64, val []byte)) error {
	ov := s.view()
	return s.db.View(func(tx *bolt.Tx) error {
		ov := ov.in(tx)
		c := tx.Bucket(bktData).Cursor()
		sc := msgScan{lim: lim, visit: visit}
		first := true
		for _, sg := range segs {
			if sg.To <= start {
				continue
			}
			from, to := max(start, sg.From), min(sg.To, tail)
			logged := ov.messages(sg.SID, from, to)
			want := posKey(sg.SID, from)
			k, val := c.Seek(want)
			if first && (k == nil || !bytes.Equal(k, want)) && (len(logged) == 0 || logged[0].Off != from) {
				return model.ErrOffsetNotBoundary
			}
			first = false
			if !sc.segment(c, k, val, sg.SID, to, logged) {
				return nil
			}
		}
		return nil
	})
}

// msgScan visits messages within a limit.
type msgScan struct {
	lim         storage.Limits
	visit       func(off uint64, val []byte)
	taken, size int
}

// segment visits one segment's messages below to: the cursor's (at k) merged with the
// logged ones. It reports false once the limit is reached.
func (sc *msgScan) segment(c *bolt.Cursor, k, val []byte, sid, to uint64, logged []storage.Message) bool {
	for {
		stored := false
		var off uint64
		if k != nil {
			ksid, koff := splitPosKey(k)
			stored = ksid == sid && koff < to
			off = koff
		}
		switch {
		case !stored && len(logged) == 0:
			return true
		case stored && (len(logged) == 0 || off < logged[0].Off):
			if !sc.take(off, val) {
				return false
			}
			k, val = c.Next()
		default:
			if stored && off == logged[0].Off {
				k, val = c.Next()
			}
			if !sc.take(logged[0].Off, logged[0].Val) {
				return false
			}
			logged = logged[1:]
		}
	}
}

func (sc *msgScan) take(off uint64, val []byte) bool {
	if !sc.lim.Allows(sc.taken, sc.size, len(val)-1) {
		return false
	}
	if sc.visit != nil {
		sc.visit(off, val)
	}
	sc.taken++
	sc.size += len(val) - 1
	return true
}

// MessageAt returns the message of segs that holds off: a seek and one step back in the
// data file, a binary search in the log's layers; the later start wins.
func (s *Store) MessageAt(segs []storage.Segment, off uint64) (start uint64, val []byte, err error) {
	ov := s.view()
	err = s.db.View(func(tx *bolt.Tx) error {
		ov := ov.in(tx)
		for _, sg := range segs {
			if off < sg.From || off >= sg.To {
				continue
			}
			at, v, ok := storedMessageAt(tx, sg.SID, off)
			if lat, lv, lok := ov.messageAt(sg.SID, off); lok && (!ok || lat >= at) {
				at, v, ok = lat, lv, true
			}
			if ok && at >= sg.From && at+uint64(len(v)-1) > off {
				start, val = at, bytes.Clone(v)
				return nil
			}
			break
		}
		return model.ErrOffsetNotBoundary
	})
	return start, val, err
}

// storedMessageAt returns the stored message of sid with the greatest offset <= off.
func storedMessageAt(tx *bolt.Tx, sid, off uint64) (uint64, []byte, bool) {
	c := tx.Bucket(bktData).Cursor()
	k, v := c.Seek(posKey(sid, off+1))
	if k == nil {
		k, v = c.Last()
	} else {
		k, v = c.Prev()
	}
	if k == nil || len(k) != 16 {
		return 0, nil, false
	}
	ksid, at := splitPosKey(k)
	return at, v, ksid == sid
}

// RecordOffset returns the offset of record r of sid: one lookup in the layers, then one
// in the index.
func (s *Store) RecordOffset(sid, r uint64) (off uint64, ok bool, err error) {
	ov := s.view()
	err = s.db.View(func(tx *bolt.Tx) error {
		if off, ok = ov.in(tx).record(sid, r); ok {
			return nil
		}
		if v := tx.Bucket(bktRecords).Get(posKey(sid, r)); v != nil {
			off, ok = getU64(v), true
		}
		return nil
	})
	return off, ok, err
}

// OrdinalAt binary-searches the record index of sid in [lo, hi) (logged entries first)
// for the first record at or after off.
func (s *Store) OrdinalAt(sid, lo, hi, off uint64) (rec uint64, err error) {
	ov := s.view()
	err = s.db.View(func(tx *bolt.Tx) error {
		ov := ov.in(tx)
		b := tx.Bucket(bktRecords)
		i := sort.Search(int(hi-lo), func(i int) bool {
			r := lo + uint64(i)
			if at, ok := ov.record(sid, r); ok {
				return at >= off
			}
			v := b.Get(posKey(sid, r))
			return v == nil || getU64(v) >= off
		})
		rec = lo + uint64(i)
		return nil
	})
	return rec, err
}

// Producer returns a producer's stored state, nil when unknown.
func (s *Store) Producer(sid uint64, id string) (st *storage.ProducerState, err error) {
	ov := s.view()
	err = s.db.View(func(tx *bolt.Tx) error {
		if lst := ov.in(tx).producer(sid, id); lst != nil {
			c := *lst
			c.Receipts = append([]storage.Receipt(nil), lst.Receipts...)
			st = &c
			return nil
		}
		if v := tx.Bucket(bktProds).Get(prodKey(sid, id)); v != nil {
			st, err = decodeProducer(v)
		}
		return err
	})
	return st, err
}

// Receipt returns the stored acknowledgement of p's (epoch, seq).
func (s *Store) Receipt(sid uint64, p model.Producer) (r storage.Receipt, ok bool, err error) {
	ov := s.view()
	err = s.db.View(func(tx *bolt.Tx) error {
		if r, ok = ov.in(tx).receipt(sid, p); ok {
			return nil
		}
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
	ov := s.view()
	return s.db.View(func(tx *bolt.Tx) error {
		ov := ov.in(tx)
		c, meta := tx.Bucket(bktNames).Cursor(), tx.Bucket(bktMeta)
		for k, v := c.Seek([]byte(seek)); k != nil && strings.HasPrefix(string(k), prefix); k, v = c.Next() {
			if meta.Get(v) == nil {
				continue
			}
			m, err := loadMeta(tx, ov, getU64(v))
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
