package model

import "time"

// appendRequest is a POST {stream} once its headers are parsed (A-07 step 1).
type appendRequest struct {
	body      []byte
	close     bool
	mediaType string // judged only with a body
	producer  *Producer
	streamSeq *string
	// recordMatch is Stream-Record-Match (extension §6.4).
	recordMatch *uint64
}

// parseAppend decides the syntax 400s of A-07 step 1, in order: producer headers
// (all-or-none, non-empty id, integers 0..2^53-1: B-5.2.1-01, B-5.2.1-02); an empty body
// without Stream-Closed: true (B-5.2-06); with a body, a missing (B-5.2-02) or malformed
// Content-Type, never judged on an empty body (B-5.2-03); an empty Stream-Seq
// a Stream-Record-Match that is not an unsigned integer (extension §6.4: 400
// INVALID_RECORD_PARAMS). An empty Content-Type counts as missing.
func parseAppend(c AppendStream) (appendRequest, error) {
	req := appendRequest{body: c.Body, close: c.Closed != nil && StreamClosedHeader(*c.Closed),
		streamSeq: c.StreamSeq}
	p, err := ParseProducer(deref(c.ProducerID), deref(c.ProducerEpoch), deref(c.ProducerSeq),
		c.ProducerID != nil, c.ProducerEpoch != nil, c.ProducerSeq != nil)
	if err != nil {
		return req, ErrBadProducer
	}
	req.producer = p
	if len(c.Body) == 0 && !req.close {
		return req, ErrEmptyBody
	}
	if len(c.Body) > 0 {
		if c.ContentType == nil || *c.ContentType == "" {
			return req, ErrMissingContentType
		}
		mt, err := MediaType(*c.ContentType)
		if err != nil {
			return req, ErrBadContentType
		}
		req.mediaType = mt
	}
	if c.StreamSeq != nil && *c.StreamSeq == "" {
		return req, ErrBadStreamSeq
	}
	if c.RecordMatch != nil {
		n, ok := ParseRecordOrdinal(*c.RecordMatch)
		if !ok {
			return req, ErrRecordMatchValue
		}
		req.recordMatch = &n
	}
	return req, nil
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// appendStream: POST {stream}, evaluated in the order of A-07.
//
//  1. Syntax 400s (X-1.1 ids, then parseAppend).
//  2. 404 for a missing or expired stream (B-5.2-08, A-14). A POST that reaches a live
//     stream restarts its TTL, whatever its outcome (B-5.1-04, A-14).
//  3. A closed stream (appendToClosed).
//  4. With a body, a Content-Type that is not media-type equal to the stream's: 409
//     (B-5.2-02, B-5.2-11, B-12.4-01).
//  5. The producer table (AdmitProducer): 403 stale epoch, 409 gap, 400 new epoch not at
//     seq 0, or a duplicate: 204, nothing written (B-5.2.1-03), with Producer-Epoch and
//     Producer-Seq = the highest accepted seq (B-5.2.1-04) and Stream-Next-Offset = the
//     end of the producer's last accepted append when seq = lastSeq, else the tail
//     . Dedup comes before Stream-Seq (B-5.2.1-05).
//  6. With a body, a Stream-Seq not above the last one: 409 (B-5.2-05, B-12.6-01, A-06).
//     On a JSON stream, a Stream-Record-Match other than N: 412 with N and the tail
//     (extension §6.4; it composes with producer and Stream-Seq checks and comes after
//     them); other streams ignore it (CONFORMANCE.md "Record coordinates").
//  7. On a JSON stream, the body is flattened: invalid JSON or "[]" is 400 (B-9.1-03).
//  8. Commit atomically: the body as one append unit, Stream-Seq (only with data,
//     A-06), the producer state, and the close, recording the closing tuple.
//     200 for an append with producer headers, else 204 (B-5.2-08, B-5.2.1-08);
//     Stream-Next-Offset is the new tail, Stream-Closed: true when closed (B-5.2-09).
//     On a JSON stream the messages get the next ordinals, one contiguous range
//     [start, next) reported in Stream-Record-Start/-Next (start = next = N when none is
//     created), with Stream-Extensions (extension §6.3).
func (s State) appendStream(c AppendStream, now time.Time) (State, Result) {
	if err := checkKey(c.Stream); err != nil {
		return s, fail(StatusBadRequest, err)
	}
	req, err := parseAppend(c)
	if err != nil {
		return s, fail(StatusBadRequest, err)
	}
	s, st, res := s.touchLive(c.Stream, now)
	if st == nil {
		return s, res
	}
	return s, st.decideAppend(req)
}

// decideAppend runs A-07 steps 3-8 on a live stream that the caller has cloned: it
// changes st when the append is admitted and returns the response. An append-batch frame
// goes through the same steps (extension §4: each frame is its own append).
func (st *stream) decideAppend(req appendRequest) Result {
	if st.closed {
		return appendToClosed(st, req)
	}
	if len(req.body) > 0 && req.mediaType != st.mediaType {
		return fail(StatusConflict, ErrContentTypeMismatch)
	}
	if p := req.producer; p != nil {
		ps := st.producer(p.ID)
		adm, err := AdmitProducer(ps, *p)
		if err != nil {
			return fail(producerErrorStatus(err), err)
		}
		if adm == AdmitDuplicate {
			next := st.tail()
			if p.Seq == ps.LastSeq {
				next = ps.LastEnd
			}
			rs, rn := st.receipt(*p)
			return Result{Status: StatusNoContent, NextOffset: offsetPtr(next), Closed: st.closed,
				Producer: &ProducerAck{Epoch: ps.Epoch, Seq: ps.LastSeq}}.recordAck(st, rs, rn)
		}
	}
	if len(req.body) > 0 && req.streamSeq != nil && StreamSeqRegresses(st.streamSeq, *req.streamSeq) {
		return fail(StatusConflict, ErrStreamSeqConflict)
	}
	if m := req.recordMatch; m != nil && st.isJSON() && *m != st.recordNext() {
		return fail(StatusPrecondition, &RecordMismatchError{Next: st.recordNext(), Tail: st.tail()})
	}
	firstRecord := st.recordNext()
	var msgs [][]byte
	if len(req.body) > 0 {
		if st.isJSON() {
			flat, err := FlattenJSON(req.body, false)
			if err != nil {
				return fail(StatusBadRequest, err)
			}
			msgs = canonicalMessages(flat)
		} else {
			msgs = [][]byte{req.body}
		}
		st.appendUnit(msgs)
		if req.streamSeq != nil {
			st.streamSeq = req.streamSeq
		}
	}
	res := Result{Status: StatusNoContent}
	if req.close {
		st.closed = true
		if req.producer != nil {
			p := *req.producer
			st.closer = &p
		}
	}
	if p := req.producer; p != nil {
		st.setProducer(p.ID, ProducerState{Epoch: p.Epoch, LastSeq: p.Seq, LastEnd: st.tail()})
		st.setReceipt(*p, firstRecord, st.recordNext())
		res.Producer = &ProducerAck{Epoch: p.Epoch, Seq: p.Seq}
		if len(req.body) > 0 {
			res.Status = StatusOK
		}
	}
	res.NextOffset, res.Closed = offsetPtr(st.tail()), st.closed
	return res.recordAck(st, firstRecord, st.recordNext())
}

// appendToClosed answers a POST to a closed stream (A-07 step 3). Close-only: 204 with
// Stream-Closed and the final offset without producer headers (B-5.2-07, B-5.3-01) or
// with the tuple that closed the stream (a retry, echoed), and on a JSON stream the empty
// range at N; close-only with any other producer tuple is 409 with Stream-Closed and the
// final offset (D9). With a body: the exact tuple that closed the stream is a
// deduplicated success, 204 (B-5.2.1-09), which on a JSON stream reports the record range the closing request
// created (extension §6.3: "the original Stream-Record-Start and Stream-Record-Next");
// a known producer with a stale epoch is 403 (B-5.2.1-09: 403 or 409, we send 403);
// anything else is 409 with Stream-Closed and Stream-Next-Offset = the final offset
// (B-5.2-07, B-5.2-10).
func appendToClosed(st *stream, req appendRequest) Result {
	ok := Result{Status: StatusNoContent, NextOffset: offsetPtr(st.tail()), Closed: true}
	if p := req.producer; p != nil && st.closer != nil && *st.closer == *p {
		// Only the closing tuple was accepted; any other tuple is not echoed as if it had
		// been (B-5.2.1-04: Producer-Seq is the highest accepted seq).
		ok.Producer = &ProducerAck{Epoch: p.Epoch, Seq: p.Seq}
	}
	n := st.recordNext()
	if len(req.body) == 0 && (req.producer == nil || ok.Producer != nil) {
		return ok.recordAck(st, n, n)
	}
	if len(req.body) == 0 {
		return fail(StatusConflict, &ClosedError{Final: st.tail()})
	}
	if p := req.producer; p != nil {
		if st.closer != nil && *st.closer == *p {
			rs, rn := st.receipt(*p)
			return ok.recordAck(st, rs, rn)
		}
		if ps := st.producer(p.ID); ps != nil && p.Epoch < ps.Epoch {
			return fail(StatusForbidden, &StaleEpochError{Current: ps.Epoch})
		}
	}
	return fail(StatusConflict, &ClosedError{Final: st.tail()})
}

// producerErrorStatus is the status of a producer-table error (B-5.2.1-03).
func producerErrorStatus(err error) int {
	switch err.(type) {
	case *StaleEpochError:
		return StatusForbidden
	case *SeqGapError:
		return StatusConflict
	}
	return StatusBadRequest // ErrEpochSeqNotZero
}
