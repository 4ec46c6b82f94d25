package engine

import (
	"bytes"
	"errors"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/dsd-project/dsd/model"
)

// ReadRequest asks for a catch-up read (B-5.6) starting at From, or, on JSON streams,
// at a record position (extension §6.6) when Record is set.
type ReadRequest struct {
	From        model.OffsetSpec
	Record      *RecordSpec
	MaxBytes    int  // response size target; 0 = Options.ReadChunkBytes. At least one message.
	MaxMessages int  // at most this many messages (max_records); 0 = no limit
	Bounds      bool // fill ReadResult.Ends
	NoTouch     bool // do not restart the sliding TTL (HEAD-like internal reads)
}

// ReadResult is a range of whole messages [Start, Next) in canonical bytes (D3).
// UpToDate: Next is the committed tail (B-5.6-05). EOF: also closed (B-5.6-06).
// RecordStart/RecordNext are the ordinals of Start and Next, set for record-aware reads.
type ReadResult struct {
	Info        StreamInfo
	Start       model.Offset
	Next        model.Offset
	Data        []byte
	Ends        []int // with Bounds: the end index in Data of each message
	UpToDate    bool
	EOF         bool
	RecordStart uint64
	RecordNext  uint64
}

// Head returns a stream's committed metadata (B-5.5). It does not restart a TTL.
// Errors: model.ErrStreamNotFound, model.ErrStreamGone.
func (e *Engine) Head(key model.StreamKey) (StreamInfo, error) {
	_, v, err := e.readable(key, false)
	if err != nil {
		return StreamInfo{}, err
	}
	return v.info(), nil
}

// Read serves a catch-up read (B-5.6) from the committed state.
// Errors: model.ErrStreamNotFound, model.ErrStreamGone, model.ErrOffsetBeyondTail,
// model.ErrOffsetGone, model.ErrOffsetNotBoundary.
func (e *Engine) Read(key model.StreamKey, req ReadRequest) (ReadResult, error) {
	s, v, err := e.readable(key, !req.NoTouch)
	if err != nil {
		return ReadResult{}, err
	}
	return e.readView(s, v, req)
}

// readable returns the committed view of the stream at key for a reader; touch restarts
// its sliding TTL (GET does, HEAD does not: B-5.1-04).
func (e *Engine) readable(key model.StreamKey, touch bool) (*stream, *streamMeta, error) {
	s, err := e.lookup(key.String())
	if err != nil {
		return nil, nil, err
	}
	if s == nil {
		return nil, nil, model.ErrStreamNotFound
	}
	v, err := e.viewOf(s, touch)
	return s, v, err
}

// viewOf returns s's committed view, applying deletion and expiry.
func (e *Engine) viewOf(s *stream, touch bool) (*streamMeta, error) {
	v := s.view()
	switch {
	case v == nil:
		return nil, model.ErrStreamNotFound
	case v.SoftDeleted:
		return nil, model.ErrStreamGone
	}
	now := e.now()
	if s.live.Load() == 0 && v.expired(now, s.access.Load()) {
		e.expireAsync(s)
		return nil, expiredErr(v)
	}
	if touch {
		s.access.Store(now.UnixMilli())
	}
	return v, nil
}

// resolveStart turns a requested position into an offset of the view (B-8-03, B-8-04,
// A-15); a start before the retained one, -1 included once retention has advanced, is a
// *model.RetainedError (D2).
func resolveStart(v *streamMeta, spec model.OffsetSpec) (uint64, error) {
	gone := &model.RetainedError{Start: model.Offset(v.RetainedFrom)}
	switch spec.Kind {
	case model.SpecStart:
		if v.RetainedFrom > 0 {
			return 0, gone // D2 amendment: -1 is before the retained start too
		}
		return 0, nil
	case model.SpecNow:
		return v.Tail, nil
	}
	o := uint64(spec.At)
	switch {
	case o > v.Tail:
		return 0, model.ErrOffsetBeyondTail
	case o < v.RetainedFrom:
		return 0, gone
	}
	return o, nil
}

// readView reads whole messages from the committed view v of s.
func (e *Engine) readView(s *stream, v *streamMeta, req ReadRequest) (ReadResult, error) {
	start, rec, err := e.resolveRead(v, req)
	if err != nil {
		return ReadResult{}, err
	}
	lim := limits{bytes: req.MaxBytes, msgs: req.MaxMessages}
	if lim.bytes <= 0 {
		lim.bytes = e.opts.ReadChunkBytes
	}
	res := ReadResult{Info: v.info(), Start: model.Offset(start), Next: model.Offset(start),
		RecordStart: rec, RecordNext: rec}
	if start < v.Tail {
		sp, err := e.messages(s, v, start, lim)
		if errors.Is(err, model.ErrOffsetNotBoundary) {
			sp, err = e.fromHeld(s, v, start, lim)
		}
		if err != nil {
			return ReadResult{}, err
		}
		res.Data = sp.data
		if req.Bounds {
			res.Ends = sp.ends
		}
		res.Next = model.Offset(start + uint64(len(sp.data)))
		res.RecordNext = rec + uint64(len(sp.ends))
	}
	res.UpToDate = uint64(res.Next) == v.Tail
	res.EOF = res.UpToDate && v.Closed
	return res, nil
}

// resolveRead resolves the start of a read: an offset position, or a record position and
// its ordinal (extension §6.6).
func (e *Engine) resolveRead(v *streamMeta, req ReadRequest) (off, rec uint64, err error) {
	if req.Record == nil {
		off, err = resolveStart(v, req.From)
		return off, 0, err
	}
	return e.resolveRecord(v, *req.Record)
}

// limits bound one read: about bytes (at least one message), at most msgs (0 = none).
type limits struct{ bytes, msgs int }

// allows reports whether a message of size n may follow taken messages of total size.
func (l limits) allows(taken, size, n int) bool {
	if taken == 0 {
		return true
	}
	return size+n <= l.bytes && (l.msgs == 0 || taken < l.msgs)
}

// span is whole messages copied out contiguously: their canonical bytes and the end of
// each message in data.
type span struct {
	data []byte
	ends []int
}

func (sp *span) add(msg []byte) {
	sp.data = append(sp.data, msg...)
	sp.ends = append(sp.ends, len(sp.data))
}

// messages returns whole messages from start (a message boundary, else
// ErrOffsetNotBoundary) within the limits and the view, from the tail cache when it
// covers start, else from storage.
func (e *Engine) messages(s *stream, v *streamMeta, start uint64, lim limits) (span, error) {
	sp := span{data: make([]byte, 0, lim.sizeHint(v.Tail-start))}
	s.mu.Lock()
	cached, ok, found := s.cache.slice(start, v.Tail)
	if ok && s.cache.end < v.Tail {
		ok = false // the view is ahead of the cache (a view read from storage): use storage
	}
	if ok && found {
		for n := 0; n < len(cached) && lim.allows(n, len(sp.data), int(cached[n].size())); n++ {
			sp.add(cached[n].data())
		}
		s.cacheUsed = time.Now().UnixMilli()
	}
	s.mu.Unlock()
	switch {
	case ok && !found:
		return span{}, model.ErrOffsetNotBoundary
	case ok:
		return sp, nil
	}
	err := e.db.View(func(tx *bolt.Tx) error {
		return scanSegments(tx, v.segments(), start, v.Tail, lim, func(_ uint64, val []byte) { sp.add(val[1:]) })
	})
	return sp, err
}

// sizeHint is the buffer to start a read with, given avail bytes before the tail.
func (l limits) sizeHint(avail uint64) uint64 {
	n := min(uint64(l.bytes), avail, 256<<10)
	if l.msgs > 0 {
		n = min(n, uint64(l.msgs)*256)
	}
	return n
}

// one is the limit of a single message.
var one = limits{bytes: 0, msgs: 1}

// scanSegments visits the stored values (flags byte, then bytes) of whole messages in
// [start, tail) across segments within the limits. start must be a message boundary
// (else ErrOffsetNotBoundary). Values are valid only inside the transaction.
func scanSegments(tx *bolt.Tx, segs []segment, start, tail uint64, lim limits, visit func(off uint64, val []byte)) error {
	c := tx.Bucket(bktData).Cursor()
	taken, size := 0, 0
	first := true
	for _, sg := range segs {
		if sg.To <= start {
			continue
		}
		from := max(start, sg.From)
		want := posKey(sg.SID, from)
		k, val := c.Seek(want)
		if first && (k == nil || !bytes.Equal(k, want)) {
			return model.ErrOffsetNotBoundary
		}
		first = false
		for ; k != nil; k, val = c.Next() {
			sid, off := splitPosKey(k)
			if sid != sg.SID || off >= sg.To || off >= tail {
				break
			}
			if !lim.allows(taken, size, len(val)-1) {
				return nil
			}
			if visit != nil {
				visit(off, val)
			}
			taken++
			size += len(val) - 1
		}
	}
	return nil
}
