package engine

import (
	bolt "go.etcd.io/bbolt"

	"github.com/dsd-project/dsd/model"
)

// SetRetention advances a stream's retention boundary (extension §2.2, §6.10): offsets
// (and records) before it answer 410 in every read mode from now on, and their storage is
// freed in the background once no fork references the stream and no bootstrap reads it.
// The boundary must be a message boundary (400), must not move backward (409) and must
// not pass the visible snapshot (409): /bootstrap always covers the retained start.
// Errors: model.ErrStreamNotFound, model.ErrStreamGone, model.ErrOffsetNotBoundary,
// model.ErrRetentionInvalid, *model.RecordRangeError, storage errors.
func (e *Engine) SetRetention(key model.StreamKey, at Position) (StreamInfo, error) {
	if err := e.checkWritable(); err != nil {
		return StreamInfo{}, err
	}
	s, _, err := e.readable(key, false)
	if err != nil {
		return StreamInfo{}, err
	}
	s.mu.Lock()
	decided := s.lastLSN
	o, info, lsn, err := e.decideRetention(s, at)
	s.mu.Unlock()
	switch {
	case err != nil:
		return StreamInfo{}, e.refuse(decided, err)
	case o != nil:
		return info, e.await(o)
	}
	return info, e.waitDurable(lsn)
}

func (e *Engine) decideRetention(s *stream, at Position) (*op, StreamInfo, uint64, error) {
	if err := e.liveForWrite(s, e.now()); err != nil {
		return nil, StreamInfo{}, 0, err
	}
	m := s.m
	var off, rec uint64
	var err error
	if at.ByRecord && s.isJSON && at.Record < m.RecordFirst {
		err = model.ErrRetentionInvalid // backward, as by offset
	} else if at.ByRecord {
		off, rec, err = e.recordBoundary(s.vis, at.Record)
	} else if off = uint64(at.Offset); off > s.vis.Tail {
		err = model.ErrRetentionInvalid
	} else if off >= m.RetainedFrom {
		off, rec, err = e.snapshotBoundary(s.vis, at)
	}
	switch {
	case err != nil:
		return nil, StreamInfo{}, 0, err
	case off == m.RetainedFrom:
		return nil, m.info(), s.lastLSN, nil
	case off < m.RetainedFrom, m.Snapshot == nil, off > m.Snapshot.Offset:
		return nil, StreamInfo{}, 0, model.ErrRetentionInvalid
	}
	nm := s.edit()
	nm.RetainedFrom = off
	if s.isJSON {
		nm.RecordFirst = rec
	}
	sid := s.sid
	o := &op{s: s, after: nm,
		write: func(tx *bolt.Tx) error { return tx.Bucket(bktTrim).Put(sidKey(sid), nil) },
		pub:   func() { s.publish(nm, nil) }}
	if err := e.q.push(o); err != nil {
		return nil, StreamInfo{}, 0, err
	}
	s.m, s.lastLSN = nm, o.lsn
	return o, nm.info(), 0, nil
}

// trimRetained frees, a bounded batch at a time, the data below each stream's retention
// boundary (its own segment only: inherited data belongs to the source).
func (e *Engine) trimRetained() {
	var sids []uint64
	_ = e.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bktTrim).ForEach(func(k, _ []byte) error {
			sids = append(sids, getU64(k))
			return nil
		})
	})
	for _, sid := range sids {
		e.mu.Lock()
		s, err := e.byIDLocked(sid)
		e.mu.Unlock()
		if err == nil && (s.pins.Load() > 0) {
			continue
		}
		for i := 0; i < 16; i++ {
			finished := false
			o := &op{write: func(tx *bolt.Tx) error {
				var err error
				finished, err = trimTx(tx, sid, gcBatchKeys)
				return err
			}}
			if e.submit(o) != nil || finished {
				break
			}
		}
	}
}

// trimTx deletes up to limit data and record keys of sid below its stored retention
// boundary; finished reports the trim marker is gone. A stream referenced by forks keeps
// its data (its forks may read it).
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
