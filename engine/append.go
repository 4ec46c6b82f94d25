package engine

import (
	"time"

	"github.com/dsd-project/dsd/engine/storage"

	"github.com/dsd-project/dsd/model"
)

// AppendRequest is a parsed POST {stream} (B-5.2). The HTTP layer has already rejected
// syntax errors: malformed headers, an empty body without close, a body without a valid
// Content-Type (A-07 step 1).
type AppendRequest struct {
	MediaType   string          // normalized request Content-Type; judged only with a body
	Body        []byte          // empty for close-only
	Close       bool            // Stream-Closed: true
	Producer    *model.Producer // idempotent producer triple, if sent
	StreamSeq   *string         // Stream-Seq, if sent
	RecordMatch *uint64         // Stream-Record-Match, if sent (extension §6.4)
	// Frame, optional, is Body with one spare byte in front (Frame[1:] is Body, the same
	// memory): the engine may keep Frame as Body's stored message, its flag written in
	// Frame[0], instead of copying Body (httpd reads bodies so). Ignored otherwise.
	Frame []byte

	also []storage.KVPut // subscription records written with the append (pull-wake events)
}

// AppendOutcome says what an append did.
type AppendOutcome uint8

const (
	// Appended: the body was appended (and the stream closed if asked).
	Appended AppendOutcome = iota
	// Duplicate: a producer retry; nothing was written (B-5.2.1-03).
	Duplicate
	// ClosedOnly: a close-only request closed the stream or found it closed (B-5.3-01).
	ClosedOnly
)

// AppendResult acknowledges an append. Tail is Stream-Next-Offset. ProducerEpoch and
// ProducerSeq echo the producer state (B-5.2.1-04). RecordStart/RecordNext is the record
// range created, or the original range of a deduplicated retry (extension §6.3).
type AppendResult struct {
	Outcome       AppendOutcome
	Tail          model.Offset
	Closed        bool
	ProducerEpoch uint64
	ProducerSeq   uint64
	ProducerAck   bool // ProducerEpoch/ProducerSeq are an accepted tuple, to echo (B-5.2.1-04)
	JSON          bool
	RecordStart   uint64
	RecordNext    uint64
}

// Append appends to (and/or closes) the stream at key, in the evaluation order of A-07.
// Errors: model.ErrStreamNotFound, model.ErrStreamGone, *model.ClosedError,
// model.ErrContentTypeMismatch, *model.StaleEpochError, *model.SeqGapError,
// model.ErrEpochSeqNotZero, model.ErrStreamSeqConflict, *model.RecordMismatchError,
// model.ErrInvalidJSON, model.ErrEmptyJSONArray, storage errors.
func (e *Engine) Append(key model.StreamKey, req AppendRequest) (AppendResult, error) {
	if err := e.checkWritable(); err != nil {
		return AppendResult{}, err
	}
	if hook := e.appendHook.Load(); hook != nil {
		(*hook)()
	}
	s, err := e.lookupKey(key)
	if err != nil || s == nil {
		if err == nil {
			err = model.ErrStreamNotFound
		}
		return AppendResult{}, err
	}
	var msgs [][]byte
	var parseErr error
	if s.isJSON && len(req.Body) > 0 {
		msgs, parseErr = model.FlattenJSON(req.Body, false)
	}
	now := e.now()
	s.mu.Lock()
	if s.evicted {
		s.mu.Unlock()
		return e.Append(key, req)
	}
	decided := s.lastLSN
	res, o, lsn, err := e.decideAppend(s, &req, msgs, parseErr, now)
	s.mu.Unlock()
	switch {
	case err != nil:
		return AppendResult{}, e.refuse(decided, err)
	case o != nil:
		return res, e.awaitOwn(o)
	}
	return res, e.waitDurable(lsn)
}

// decideAppend runs A-07 steps 2-8 under s.mu. It returns either a queued op to await,
// or an answer derived from decided state that is sent once lsn is durable.
func (e *Engine) decideAppend(s *stream, req *AppendRequest, msgs [][]byte, parseErr error, now time.Time) (AppendResult, *op, uint64, error) {
	if err := e.liveForWrite(s, now); err != nil {
		return AppendResult{}, nil, 0, err
	}
	s.access.Store(now.UnixMilli())
	m := s.m
	res := AppendResult{Tail: model.Offset(m.Tail), Closed: m.Closed, JSON: s.isJSON,
		RecordStart: m.RecordNext, RecordNext: m.RecordNext}
	if p := req.Producer; p != nil {
		res.ProducerEpoch, res.ProducerSeq, res.ProducerAck = p.Epoch, p.Seq, true
	}
	if m.Closed {
		return e.appendToClosed(s, req, res)
	}
	if len(req.Body) > 0 && req.MediaType != m.MediaType {
		return res, nil, 0, model.ErrContentTypeMismatch
	}
	var st *producerState
	if p := req.Producer; p != nil {
		var err error
		if st, err = e.producer(s, p.ID); err != nil {
			return res, nil, 0, err
		}
		adm, err := admit(st, p)
		if err != nil {
			return res, nil, 0, err
		}
		if adm == admitDuplicate {
			return e.duplicateResult(s, st, p, res), nil, s.lastLSN, nil
		}
	}
	if len(req.Body) > 0 && req.StreamSeq != nil && m.StreamSeq != nil && *req.StreamSeq <= *m.StreamSeq {
		return res, nil, 0, model.ErrStreamSeqConflict
	}
	if req.RecordMatch != nil && s.isJSON && *req.RecordMatch != m.RecordNext {
		return res, nil, 0, &model.RecordMismatchError{Next: m.RecordNext, Tail: model.Offset(m.Tail)}
	}
	if parseErr != nil {
		return res, nil, 0, parseErr
	}
	o, res, err := e.queueAppend(s, req, msgs, st, res, now)
	if err != nil {
		return res, nil, 0, err
	}
	return res, o, 0, nil
}

// liveForWrite checks that s may be written: not deleted, not soft-deleted, not expired
// (an expired stream is deleted here, A-14). s.mu and not e.mu is held.
func (e *Engine) liveForWrite(s *stream, now time.Time) error {
	switch {
	case s.broken.Load() != nil:
		return model.ErrStorageFailed // its commit failed: refused until reloaded (D4)
	case s.deleted:
		return model.ErrStreamNotFound
	case s.m.SoftDeleted:
		return model.ErrStreamGone
	case s.m.expired(now, s.access.Load()) && s.live.Load() == 0:
		e.expireAsync(s)
		return expiredErr(s.m)
	}
	return nil
}

// expiredErr is what a request to an expired stream gets: 404, or 410 when forks still
// reference it, since expiring it makes it soft-deleted (A-14, A-23, B-4.2-10).
func expiredErr(m *streamMeta) error {
	if m.Refs > 0 {
		return model.ErrStreamGone
	}
	return model.ErrStreamNotFound
}

// appendToClosed answers a POST to a closed stream (A-07 step 3, B-5.2-07, B-5.2.1-09, D9).
func (e *Engine) appendToClosed(s *stream, req *AppendRequest, res AppendResult) (AppendResult, *op, uint64, error) {
	m := s.m
	closer := req.Producer != nil && m.Closer != nil && *m.Closer == *req.Producer
	if !closer {
		// Only the closing tuple was accepted; any other is not echoed as if it had been.
		res.ProducerEpoch, res.ProducerSeq, res.ProducerAck = 0, 0, false
	}
	if len(req.Body) == 0 && (req.Producer == nil || closer) {
		res.Outcome = ClosedOnly
		return res, nil, s.lastLSN, nil
	}
	if len(req.Body) == 0 {
		return res, nil, 0, &model.ClosedError{Final: model.Offset(m.Tail)} // another tuple (D9)
	}
	if p := req.Producer; p != nil {
		st, err := e.producer(s, p.ID)
		if err != nil {
			return res, nil, 0, err
		}
		if m.Closer != nil && *m.Closer == *p && st != nil {
			return e.duplicateResult(s, st, p, res), nil, s.lastLSN, nil
		}
		if st != nil && p.Epoch < st.Epoch {
			return res, nil, 0, &model.StaleEpochError{Current: st.Epoch}
		}
	}
	return res, nil, 0, &model.ClosedError{Final: model.Offset(m.Tail)}
}

// duplicateResult acknowledges a deduplicated producer retry (A-08, extension §6.3): the
// original Stream-Next-Offset for the last accepted seq, the original record range for
// any seq (from the recent receipts, else from the stored ones). s.mu is held.
func (e *Engine) duplicateResult(s *stream, st *producerState, p *model.Producer, res AppendResult) AppendResult {
	res.Outcome = Duplicate
	res.ProducerEpoch, res.ProducerSeq = st.Epoch, st.LastSeq
	r, ok := st.receiptFor(p.Seq)
	if !ok && s.isJSON {
		r, ok = e.storedReceipt(s.sid, p)
	}
	if ok {
		if p.Seq == st.LastSeq {
			res.Tail = model.Offset(r.End)
		}
		res.RecordStart, res.RecordNext = r.RecStart, r.RecNext
	}
	return res
}

// queueAppend applies an admitted append to the decided state and queues it. s.mu is
// held.
func (e *Engine) queueAppend(s *stream, req *AppendRequest, msgs [][]byte, st *producerState, res AppendResult, now time.Time) (*op, AppendResult, error) {
	nm := s.edit()
	o := &op{s: s, after: nm}
	var entries []cachedMsg
	if len(req.Body) > 0 {
		entries = appendUnitMessages(o.one[:0], nm.Tail, req.Body, req.Frame, msgs, s.isJSON)
		nm.Tail += unitBytes(entries)
		if s.isJSON {
			nm.RecordNext += uint64(len(entries))
		}
		if req.StreamSeq != nil {
			nm.StreamSeq = req.StreamSeq
		}
		nm.LastWriteMs = now.UnixMilli()
	}
	nm.AccessMs = now.UnixMilli()
	res.Outcome = Appended
	if len(req.Body) == 0 {
		res.Outcome = ClosedOnly
	}
	if req.Close {
		nm.Closed = true
		if req.Producer != nil {
			c := *req.Producer
			nm.Closer = &c
		}
	}
	res.Tail, res.Closed, res.RecordNext = model.Offset(nm.Tail), nm.Closed, nm.RecordNext
	ch := storage.Change{SID: s.sid, Messages: entries, Records: s.isJSON, FirstRecord: res.RecordStart}
	var ns *producerState
	if p := req.Producer; p != nil {
		rcpt := receipt{Seq: p.Seq, End: nm.Tail, RecStart: res.RecordStart, RecNext: res.RecordNext}
		ns = accepted(st, p, rcpt)
		ch.Producer = &storage.ProducerPut{ID: p.ID, State: ns.stored()}
		if s.isJSON {
			ch.Producer.Receipt = &rcpt
		}
	}
	ch.Meta = s.metaRefresh(nm, now, e.closing.Load())
	ch.Subs = req.also
	o.ch, o.msgs = ch, entries
	if err := e.q.pushOwn(o); err != nil { // Append awaits it: awaitOwn
		return nil, res, err
	}
	if ns != nil {
		s.producers[req.Producer.ID] = ns
	}
	s.m = nm
	s.lastLSN = o.lsn
	return o, res, nil
}

// How stale the stored meta of a stream may be in fields that reopening derives (tail,
// record tail) or that only inform: metaRefreshMs in the access time of a stream with a
// sliding TTL, whose expiry after an unload or restart reads the stored one;
// metaRefreshIdleMs in the last write time of any other, the one field that then lags (a
// listing shows a loaded stream's own, ListStreams; Close and an unload write a lagging
// meta first, flushMetas and evictLocked, so only a crash can leave it behind). The longer
// bound keeps appends spread over many streams from rewriting a meta each, a page of its
// own at the checkpoint (issue 19, target 6).
const (
	metaRefreshMs     = 1000
	metaRefreshIdleMs = 60000
)

// metaRefresh returns nm (storedMeta) when the op must rewrite the stream's meta, nil
// when only derivable fields changed and the stored meta (s.stored) is recent in the
// field that lags: most appends then write their data and nothing else, which keeps the
// pages one commit dirties (and syncs) few. closing (Engine.closing, read under s.mu) forces the
// rewrite: Close's flushMetas may have passed s already, and an append racing Close must
// not leave the meta lagging. s.mu is held.
func (s *stream) metaRefresh(nm *streamMeta, now time.Time, closing bool) *storage.Meta {
	age, every := now.UnixMilli()-s.stored.LastWriteMs, int64(metaRefreshIdleMs)
	if nm.TTL != nil {
		age, every = now.UnixMilli()-s.stored.AccessMs, metaRefreshMs
	}
	if !closing && nm.Closed == s.m.Closed && nm.StreamSeq == s.m.StreamSeq && age < every {
		return nil
	}
	return s.storedMeta(nm)
}

// expireAsync deletes an expired stream without waiting. s.mu is held; e.mu is
// taken after releasing nothing, so it must not be held by the caller.
func (e *Engine) expireAsync(s *stream) {
	go func() {
		e.mu.Lock()
		s.mu.Lock()
		if !s.evicted && !s.deleted && !s.m.SoftDeleted && s.live.Load() == 0 && s.m.expired(e.now(), s.access.Load()) {
			_ = e.expireLocked(s)
		}
		s.mu.Unlock()
		e.mu.Unlock()
	}()
}
