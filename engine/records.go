package engine

import (
	"sort"

	bolt "go.etcd.io/bbolt"

	"github.com/dsd-project/dsd/model"
)

// recordSpan is a segment with the ordinals of its records: [RecFrom, RecEnd).
type recordSpan struct {
	segment
	RecEnd uint64
}

// recordSpans returns the view's segments with their record ranges (JSON streams).
func (m *streamMeta) recordSpans() []recordSpan {
	segs := m.segments()
	out := make([]recordSpan, len(segs))
	for i, sg := range segs {
		end := m.RecordNext
		if i+1 < len(segs) {
			end = segs[i+1].RecFrom
		}
		out[i] = recordSpan{segment: sg, RecEnd: end}
	}
	return out
}

// recordOffset returns O(r), the offset of record r, for F <= r < N (extension §6.1).
// It is one index lookup: O(log n) in the stream's length.
func recordOffset(tx *bolt.Tx, m *streamMeta, r uint64) (uint64, bool) {
	if r == m.RecordNext {
		return m.Tail, true
	}
	for _, sp := range m.recordSpans() {
		if r >= sp.RecFrom && r < sp.RecEnd {
			v := tx.Bucket(bktRecords).Get(posKey(sp.SID, r))
			if v == nil {
				return 0, false
			}
			return getU64(v), true
		}
	}
	return 0, false
}

// ordinalAt returns the ordinal of the record starting at offset off (a message
// boundary of a JSON view), by binary search over the record index.
func ordinalAt(tx *bolt.Tx, m *streamMeta, off uint64) (uint64, error) {
	if off >= m.Tail {
		return m.RecordNext, nil
	}
	for _, sp := range m.recordSpans() {
		if off < sp.From || off >= sp.To {
			continue
		}
		lo := sp.RecFrom
		if m.RecordFirst > lo {
			lo = m.RecordFirst
		}
		b := tx.Bucket(bktRecords)
		n := int(sp.RecEnd - lo)
		i := sort.Search(n, func(i int) bool {
			v := b.Get(posKey(sp.SID, lo+uint64(i)))
			return v == nil || getU64(v) >= off
		})
		return lo + uint64(i), nil
	}
	return m.RecordNext, nil
}

// RecordKind says how a record-aware read starts (extension §6.6).
type RecordKind uint8

const (
	// RecordAt starts at record N (record=N).
	RecordAt RecordKind = iota
	// RecordNow starts at the record tail (record=now, tail_records=0).
	RecordNow
	// RecordTail starts at max(F, N-count) (tail_records=count).
	RecordTail
	// RecordContinue continues a live read at Offset, whose ordinal N is known.
	RecordContinue
)

// RecordSpec is a record-aware start position.
type RecordSpec struct {
	Kind   RecordKind
	N      uint64       // the ordinal (RecordAt, RecordContinue) or count (RecordTail)
	Offset model.Offset // RecordContinue only
}

// resolveRecord resolves a record position of a JSON view to (offset, ordinal)
// (extension §6.6): below F is 410 and beyond N is 400, both with F and N.
func (e *Engine) resolveRecord(v *streamMeta, rs RecordSpec) (off, rec uint64, err error) {
	if !v.isJSON() {
		return 0, 0, model.ErrBadRecord
	}
	switch rs.Kind {
	case RecordNow:
		return v.Tail, v.RecordNext, nil
	case RecordTail:
		rec = v.RecordFirst
		if rs.N < v.RecordNext-v.RecordFirst {
			rec = v.RecordNext - rs.N
		}
	case RecordContinue:
		if uint64(rs.Offset) < v.RetainedFrom {
			return 0, 0, &model.RecordRangeError{First: v.RecordFirst, Next: v.RecordNext, Gone: true}
		}
		return uint64(rs.Offset), rs.N, nil
	default:
		rec = rs.N
	}
	if rec < v.RecordFirst || rec > v.RecordNext {
		return 0, 0, &model.RecordRangeError{First: v.RecordFirst, Next: v.RecordNext, Gone: rec < v.RecordFirst}
	}
	err = e.db.View(func(tx *bolt.Tx) error {
		o, ok := recordOffset(tx, v, rec)
		if !ok {
			return &model.RecordRangeError{First: v.RecordFirst, Next: v.RecordNext, Gone: true}
		}
		off = o
		return nil
	})
	return off, rec, err
}
