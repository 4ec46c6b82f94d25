package model

import (
	"fmt"
	"time"
)

// SetRetention is PUT {stream}/retention/{offset} (Offset: the decoded path segment) or
// PUT {stream}/retention?record=N (extension §2.2, §6.10).
type SetRetention struct {
	Stream StreamKey
	Offset *string
	Record *string
}

// Name implements Command.
func (c SetRetention) Name() string {
	return fmt.Sprintf("PUT /%s/retention%s", c.Stream, position(c.Offset, c.Record))
}

// setRetention: PUT {stream}/retention (extension §2.2), decided in this order:
//
//  1. 400 bad ids, a malformed offset or record (parsePosition).
//  2. 404 missing or expired stream; no TTL restart.
//  3. By record (JSON streams, §6.10): below F 409 RETENTION_CONFLICT (backward, as by
//     offset), else recordBoundary (400 on other streams, 400 past N). By offset: past the
//     tail 409 RETENTION_CONFLICT; at or above the current boundary, one that is not a
//     message boundary 400 OFFSET_NOT_ALIGNED.
//  4. The current boundary again: a 204 no-op (CONFORMANCE.md "Retention").
//  5. 409 RETENTION_CONFLICT when it moves backward, when no snapshot is visible, or
//     past the visible snapshot (§2.2 "MUST reject ... newer than the latest published
//     snapshot"; so /bootstrap always covers the retained start, §3.4).
//  6. 204: offsets below it answer 410 and -1 starts at it from now on (§2.2); on JSON
//     streams F becomes its ordinal and no record is renumbered (§6.10).
//
// The 204 carries Stream-Next-Offset (the tail).
func (s State) setRetention(c SetRetention, now time.Time) (State, Result) {
	if err := checkKey(c.Stream); err != nil {
		return s, fail(StatusBadRequest, err)
	}
	at, err := parsePosition(c.Offset, c.Record)
	if err != nil {
		return s, fail(StatusBadRequest, err)
	}
	s, st, res := s.liveOrGone(c.Stream, now)
	if st == nil {
		return s, res
	}
	off := at.offset
	switch {
	case at.byRecord && st.isJSON() && at.record < st.recordFirst():
		return s, fail(StatusConflict, ErrRetentionInvalid) // backward, as by offset
	case at.byRecord:
		var ok bool
		if off, res, ok = st.recordBoundary(at.record); !ok {
			return s, res
		}
	case off > st.tail():
		return s, fail(StatusConflict, ErrRetentionInvalid)
	case off >= st.retained && !st.isBoundary(off):
		return s, fail(StatusBadRequest, ErrOffsetNotBoundary)
	}
	switch {
	case off == st.retained:
		return s, retentionResult(st)
	case off < st.retained, st.snapshot == nil, off > st.snapshot.offset:
		return s, fail(StatusConflict, ErrRetentionInvalid)
	}
	st = st.clone()
	st.retained = off
	return s.withStream(c.Stream, st), retentionResult(st)
}

func retentionResult(st *stream) Result {
	return Result{Status: StatusNoContent, NextOffset: offsetPtr(st.tail())}.recordBounds(st)
}
