package model

import (
	"fmt"
	"strconv"
)

// streamPosition is a boundary named by a snapshot or retention request: an offset, or
// on JSON streams a record ordinal (extension §2.2 "?record=", §6.10).
type streamPosition struct {
	offset   Offset
	record   uint64
	byRecord bool
}

// parsePosition reads the {offset} path segment (decoded, extension §8) or, when the
// segment is absent or empty, the record query parameter. Errors: ErrBadOffset for a
// malformed offset (sentinels included, D2) or neither; ErrBadRecord for a malformed
// ordinal.
func parsePosition(offset, record *string) (streamPosition, error) {
	if offset != nil && *offset != "" && record != nil {
		return streamPosition{}, ErrBoundaryTwice
	}
	if offset != nil && *offset != "" {
		o, err := ParseOffset(*offset)
		if err != nil {
			return streamPosition{}, ErrBadOffset
		}
		return streamPosition{offset: o}, nil
	}
	if record == nil {
		return streamPosition{}, fmt.Errorf("%w: an offset or ?record= is required", ErrBadOffset)
	}
	n, ok := ParseRecordOrdinal(*record)
	if !ok {
		return streamPosition{}, ErrBoundaryRecordVal
	}
	return streamPosition{record: n, byRecord: true}, nil
}

// ParseRecordOrdinal parses a record ordinal or count of extension §6: an unsigned
// decimal integer without sign or leading zeros that fits 64 bits.
func ParseRecordOrdinal(s string) (uint64, bool) {
	if s == "" || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}

// snapshotBoundary resolves and validates the boundary of a snapshot publish (extension
// §2.2, §6.10): by offset, past the tail 409 SNAPSHOT_BEYOND_TAIL, below the retention
// boundary 410 OFFSET_GONE, not a message boundary (for JSON streams: inside a record)
// 400 OFFSET_NOT_ALIGNED; by record, recordBoundary.
func (st *stream) snapshotBoundary(at streamPosition) (Offset, Result, bool) {
	if at.byRecord {
		return st.recordBoundary(at.record)
	}
	switch o := at.offset; {
	case o > st.tail():
		return 0, fail(StatusConflict, ErrSnapshotPastTail), false
	case o < st.retained:
		return 0, fail(StatusGone, ErrOffsetGone), false
	case !st.isBoundary(o):
		return 0, fail(StatusBadRequest, ErrOffsetNotBoundary), false
	}
	return at.offset, Result{}, true
}

// recordBoundary resolves record r to O(r), its first byte (extension §6.1, §6.10):
// 400 INVALID_RECORD_PARAMS on a stream without records; below F 410 RECORD_GONE and
// past N 400 RECORD_BEYOND_TAIL, both with F and N (§6.6); r = N is the tail.
func (st *stream) recordBoundary(r uint64) (Offset, Result, bool) {
	if !st.isJSON() {
		return 0, fail(StatusBadRequest, ErrBadRecord), false
	}
	first, next := st.recordFirst(), st.recordNext()
	if r < first || r > next {
		gone := r < first
		status := StatusBadRequest
		if gone {
			status = StatusGone
		}
		return 0, fail(status, &RecordRangeError{First: first, Next: next, Gone: gone}), false
	}
	return st.recordOffset(r), Result{}, true
}
