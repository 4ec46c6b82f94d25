package model

import (
	"sort"
	"time"
)

// readStream: a catch-up GET {stream}?offset=<o> (B-5.6).
//
//  1. 400 for bad ids and a malformed offset: "-1", "now" or a token of D2 (B-5.6-08,
//     A-35); an empty value is malformed.
//  2. 404 for a missing or expired stream; a GET on a live stream restarts its TTL
//     (B-5.1-04, A-14), whatever its outcome.
//  3. Resolve the start: -1 or absent is the stream's start (B-8-03), and 410 once
//     retention has advanced (D2 amendment), "now" the tail (B-8-04). A token past the
//     tail is 400, one below the retention boundary 410 (B-4-02, D2), one that is not a
//     message boundary 400 unless it is the held position of a text stream's
//     message, where SSE stopped before an incomplete UTF-8 sequence (D9). A 410 names the retention boundary in
//     Stream-Next-Offset (RetainedError).
//  4. 200 with whole messages from the start, as many as fit in ReadChunkBytes and at
//     least one; Stream-Next-Offset is the end of what was returned, never -1
//     (B-5.6-03). Stream-Up-To-Date when it reaches the tail (B-5.6-05), Stream-Closed
//     when it does so on a closed stream (B-5.6-06, B-5.6-07, B-8-07). A JSON stream's
//     body is the array of its messages, "[]" when empty (B-9.1-04, B-8-04), with
//     Stream-Extensions (extension §6).
//
// Record-aware reads (record=, tail_records=) are decided by parseRecordRead and
// readRecords (extension §6.6-§6.8): their parameter 400s come after the offset's.
func (s State) readStream(c ReadStream, now time.Time) (State, Result) {
	if err := checkKey(c.Stream); err != nil {
		return s, fail(StatusBadRequest, err)
	}
	spec := OffsetSpec{Kind: SpecStart}
	if c.Offset != nil {
		var err error
		if spec, err = ParseOffsetSpec(*c.Offset); err != nil {
			return s, fail(StatusBadRequest, ErrBadOffset)
		}
	}
	rq, err := parseRecordRead(c)
	if err != nil {
		return s, fail(StatusBadRequest, err)
	}
	s, st, res := s.touchLive(c.Stream, now)
	if st == nil {
		return s, res
	}
	if rq != nil {
		return s, st.readRecords(*rq, s.cfg.ReadChunkBytes)
	}

	start := st.retained
	switch spec.Kind {
	case SpecStart:
		if st.retained > 0 {
			return s, fail(StatusGone, &RetainedError{Start: st.retained})
		}
	case SpecNow:
		start = st.tail()
	case SpecAt:
		if spec.At > st.tail() {
			return s, fail(StatusBadRequest, ErrOffsetBeyondTail)
		}
		if spec.At < st.retained {
			return s, fail(StatusGone, &RetainedError{Start: st.retained})
		}
		if !st.isReadPosition(spec.At) {
			return s, fail(StatusBadRequest, ErrOffsetNotBoundary)
		}
		start = spec.At
	}
	end := st.chunkEnd(start, s.cfg.ReadChunkBytes)
	data := st.data[start:end]
	body := data
	if st.isJSON() {
		body = JSONArrayFromCanonical(nil, data)
	}
	upToDate := end == st.tail()
	return s, Result{Status: StatusOK, ContentType: st.contentType, NextOffset: offsetPtr(end),
		UpToDate: upToDate, Closed: upToDate && st.closed, Body: append([]byte{}, body...)}.advertise(st)
}

// chunkEnd is the end of one catch-up response from the boundary start: whole
// messages while the total stays within max bytes, and at least one message. From a held
// position (D9) the held bytes alone are not a chunk: the message after them comes too.
func (st *stream) chunkEnd(start Offset, max int) Offset {
	if start == st.tail() {
		return start
	}
	i := sort.Search(len(st.msgEnds), func(i int) bool { return st.msgEnds[i] > uint64(start) })
	if !st.isBoundary(start) && i+1 < len(st.msgEnds) {
		i++
	}
	end := st.msgEnds[i]
	for i++; i < len(st.msgEnds) && st.msgEnds[i]-uint64(start) <= uint64(max); i++ {
		end = st.msgEnds[i]
	}
	return Offset(end)
}

// headStream: HEAD {stream} (B-5.5): 400 for bad ids, 404 for a missing or expired
// stream, else 200 with Content-Type, Stream-Next-Offset (the tail), Stream-TTL (the
// configured window), Stream-Expires-At and Stream-Closed when closed (B-5.5-02), and
// Stream-Snapshot-Offset and -Digest of the visible snapshot (extension §2.4), and on a
// JSON stream Stream-Extensions with F and N (extension §6.5). HEAD
// never restarts a TTL (B-5.1-04, B-5.5-03).
func (s State) headStream(c HeadStream, now time.Time) (State, Result) {
	if err := checkKey(c.Stream); err != nil {
		return s, fail(StatusBadRequest, err)
	}
	s, st, res := s.liveOrGone(c.Stream, now)
	if st == nil {
		return s, res
	}
	res = Result{Status: StatusOK, ContentType: st.contentType, NextOffset: offsetPtr(st.tail()),
		Closed: st.closed, TTL: st.ttl}
	if sn := st.snapshot; sn != nil {
		res.Snapshot = sn.ref()
	}
	res = res.recordBounds(st)
	if st.expiresAtMs != nil {
		t := time.UnixMilli(*st.expiresAtMs).UTC()
		res.ExpiresAt = &t
	}
	return s, res
}
