package model

import "strconv"

// recordRead is a record-aware read's parameters (extension §6.6, §6.8).
type recordRead struct {
	kind     recordStart
	n        uint64 // the ordinal (recordAt) or the count (recordTail)
	max      uint64 // max_records; 0: no limit
	envelope bool   // record_view=envelope
}

type recordStart uint8

const (
	recordAt   recordStart = iota // record=N
	recordNow                     // record=now, tail_records=0
	recordTail                    // tail_records=N: max(F, N-count)
)

// MaxRecordsLimit is the largest max_records dsd accepts.
const MaxRecordsLimit = 1 << 31

// parseRecordRead reads the record parameters of a GET (extension §6.6, §6.8): nil
// without record= or tail_records=, where max_records= or record_view= alone is 400.
// Errors (all ErrBadRecord, 400): both starts, or either with offset= or max_bytes=
// (§6.6: mutually exclusive; max_bytes never with record reads); an ordinal or count
// that is not an unsigned integer; max_records 0 or above 2^31; a record_view other
// than "envelope".
func parseRecordRead(c ReadStream) (*recordRead, error) {
	if c.Record == nil && c.TailRecords == nil {
		if c.MaxRecords != nil || c.RecordView != nil {
			return nil, ErrRecordAlone
		}
		return nil, nil
	}
	if (c.Record != nil && c.TailRecords != nil) || c.Offset != nil || c.MaxBytes != nil {
		return nil, ErrRecordExclusive
	}
	var rq recordRead
	var ok bool
	switch {
	case c.Record != nil && *c.Record == "now":
		rq.kind, ok = recordNow, true
	case c.Record != nil:
		rq.kind = recordAt
		rq.n, ok = ParseRecordOrdinal(*c.Record)
	default:
		rq.kind = recordTail
		if rq.n, ok = ParseRecordOrdinal(*c.TailRecords); rq.n == 0 {
			rq.kind = recordNow
		}
	}
	if !ok && c.Record != nil {
		return nil, ErrRecordValue
	}
	if !ok {
		return nil, ErrTailRecordsValue
	}
	if c.MaxRecords != nil {
		if rq.max, ok = ParseRecordOrdinal(*c.MaxRecords); !ok || rq.max == 0 || rq.max > MaxRecordsLimit {
			return nil, ErrMaxRecordsValue
		}
	}
	if c.RecordView != nil {
		if *c.RecordView != "envelope" {
			return nil, ErrRecordViewValue
		}
		rq.envelope = true
	}
	return &rq, nil
}

// readRecords serves a record-aware catch-up read of a live stream (extension §6.6,
// §6.7, §6.8):
//
//  1. 400 INVALID_RECORD_PARAMS on a stream that is not JSON (record coordinates are
//     inactive there, CONFORMANCE.md "Record coordinates").
//  2. The start: record=now and tail_records=0 are N; tail_records=k is max(F, N-k);
//     record=r below F is 410 RECORD_GONE and past N 400 RECORD_BEYOND_TAIL, both with
//     F and N; r = N is an up-to-date empty read.
//  3. 200 with whole records from O(start): at most max_records, and within the read's
//     size target, at least one. application/x-ndjson carries the canonical bytes
//     (D3); the envelope view application/vnd.durable-stream-records+ndjson one
//     {"record":r,"value":v} line per record. Stream-Extensions, F, Stream-Record-Start
//     (the start), Stream-Record-Next (after the last record returned) and
//     Stream-Next-Offset (the same boundary, O(next)); Stream-Up-To-Date and
//     Stream-Closed as for ordinary reads.
func (st *stream) readRecords(rq recordRead, chunk int) Result {
	if !st.isJSON() {
		return fail(StatusBadRequest, ErrBadRecord)
	}
	first, n := st.recordFirst(), st.recordNext()
	start := rq.n
	switch rq.kind {
	case recordNow:
		start = n
	case recordTail:
		start = first
		if rq.n < n-first {
			start = n - rq.n
		}
	}
	if start < first || start > n {
		gone := start < first
		status := StatusBadRequest
		if gone {
			status = StatusGone
		}
		return fail(status, &RecordRangeError{First: first, Next: n, Gone: gone})
	}
	next, size := start, uint64(0)
	for next < n && (rq.max == 0 || next-start < rq.max) {
		m := uint64(st.recordOffset(next+1) - st.recordOffset(next))
		if next > start && size+m > uint64(chunk) {
			break
		}
		size += m
		next++
	}
	from, to := st.recordOffset(start), st.recordOffset(next)
	body, ct := append([]byte{}, st.data[from:to]...), "application/x-ndjson"
	if rq.envelope {
		body, ct = envelopes(start, st.data[from:to]), "application/vnd.durable-stream-records+ndjson"
	}
	upToDate := to == st.tail()
	res := Result{Status: StatusOK, ContentType: ct, NextOffset: offsetPtr(to), UpToDate: upToDate,
		Closed: upToDate && st.closed, Body: body}.recordBounds(st)
	res.RecordStart, res.RecordNext = u64Ptr(start), u64Ptr(next)
	return res
}

// envelopes renders canonical records as envelope lines (extension §6.8).
func envelopes(first uint64, canonical []byte) []byte {
	out := []byte{}
	r := first
	for len(canonical) > 0 {
		i := 0
		for canonical[i] != '\n' {
			i++
		}
		out = append(out, `{"record":`...)
		out = strconv.AppendUint(out, r, 10)
		out = append(out, `,"value":`...)
		out = append(out, canonical[:i]...)
		out = append(out, "}\n"...)
		canonical = canonical[i+1:]
		r++
	}
	return out
}
