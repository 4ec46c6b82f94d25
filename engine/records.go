package engine

import (
	"sort"

	bolt "go.etcd.io/bbolt"
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
