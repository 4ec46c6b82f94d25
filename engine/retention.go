package engine

import (
	"github.com/dsd-project/dsd/engine/storage"
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
	if s.evicted {
		s.mu.Unlock()
		return e.SetRetention(key, at)
	}
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
	o := &op{s: s, ch: storage.Change{SID: s.sid, Meta: s.storedMeta(nm), Retained: true},
		pub: func() { s.publish(nm, nil) }}
	if err := e.q.push(o); err != nil {
		return nil, StreamInfo{}, 0, err
	}
	s.m, s.lastLSN = nm, o.lsn
	return o, nm.info(), 0, nil
}

// trimRetained frees, a bounded batch at a time, the data below each stream's retention
// boundary (its own segment only: inherited data belongs to the source). It is
// background work: a failure is logged and retried at the next sweep (D4). It reports
// whether it met no failure.
func (e *Engine) trimRetained() bool {
	sids, err := e.st.Trims()
	if err != nil {
		e.gcFailed("list streams to trim", err)
		return false
	}
	for _, sid := range sids {
		e.mu.Lock()
		s, err := e.byIDLocked(sid)
		e.mu.Unlock()
		if err == nil && (s.pins.Load() > 0) {
			continue
		}
		for i := 0; i < 16; i++ {
			finished, err := e.st.Trim(sid, gcBatchKeys)
			if err != nil {
				e.gcFailed("trim retained data", err)
				return false
			}
			if finished {
				break
			}
		}
	}
	return true
}
