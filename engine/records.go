package engine

import (
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
func (e *Engine) recordOffset(m *streamMeta, r uint64) (uint64, bool, error) {
	if r == m.RecordNext {
		return m.Tail, true, nil
	}
	for _, sp := range m.recordSpans() {
		if r >= sp.RecFrom && r < sp.RecEnd {
			return e.st.RecordOffset(sp.SID, r)
		}
	}
	return 0, false, nil
}

// ordinalAt returns the ordinal of the record starting at offset off (a message
// boundary of a JSON view), by binary search over the record index.
func (e *Engine) ordinalAt(m *streamMeta, off uint64) (uint64, error) {
	if off >= m.Tail {
		return m.RecordNext, nil
	}
	for _, sp := range m.recordSpans() {
		if off < sp.From || off >= sp.To {
			continue
		}
		return e.st.OrdinalAt(sp.SID, max(sp.RecFrom, m.RecordFirst), sp.RecEnd, off)
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
	off, ok, err := e.recordOffset(v, rec)
	if err == nil && !ok {
		err = &model.RecordRangeError{First: v.RecordFirst, Next: v.RecordNext, Gone: true}
	}
	return off, rec, err
}
