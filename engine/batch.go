package engine

import (
	"errors"
	"time"

	"github.com/dsd-project/dsd/engine/storage"

	"github.com/dsd-project/dsd/model"
)

// FrameAck acknowledges one append-batch frame (extension §4.3, §6.11). Err is nil for a
// committed frame; otherwise it is the protocol error that frame met (the frame assigned
// no offsets or ordinals).
type FrameAck struct {
	Err         error
	Tail        model.Offset // stream_next_offset
	Closed      bool         // stream_closed
	RecordStart uint64       // JSON streams
	RecordNext  uint64
}

// AppendBatch appends each frame as its own logical append, in order, with its own
// acknowledgement; frames never merge (extension §4). All frames are decided in one pass
// and commit in the same commit group. mediaType is the request's normalized
// Content-Type, applied to every frame.
// Errors (whole request): model.ErrStreamNotFound, model.ErrStreamGone, storage errors.
func (e *Engine) AppendBatch(key model.StreamKey, mediaType string, frames [][]byte) ([]FrameAck, bool, error) {
	if err := e.checkWritable(); err != nil {
		return nil, false, err
	}
	s, err := e.lookupKey(key)
	if err != nil || s == nil {
		if err == nil {
			err = model.ErrStreamNotFound
		}
		return nil, false, err
	}
	parsed := make([][][]byte, len(frames))
	parseErr := make([]error, len(frames))
	if s.isJSON {
		total := 0
		for i, f := range frames {
			parsed[i], parseErr[i] = model.FlattenJSON(f, false)
			if total += len(parsed[i]); total > model.MaxMessagesPerRequest ||
				errors.Is(parseErr[i], model.ErrTooManyMessages) {
				return nil, true, model.ErrTooManyMessages
			}
		}
	}
	now := e.now()
	s.mu.Lock()
	if s.evicted {
		s.mu.Unlock()
		return e.AppendBatch(key, mediaType, frames)
	}
	decided := s.lastLSN
	acks, o, err := e.decideBatch(s, mediaType, frames, parsed, parseErr, now)
	s.mu.Unlock()
	switch {
	case err != nil:
		return nil, false, e.refuse(decided, err)
	case o != nil:
		err = e.awaitOwn(o)
	default:
		err = e.waitDurable(decided) // every frame refused from decided state
	}
	return acks, s.isJSON, err
}

// decideBatch decides every frame under s.mu and queues one op for the accepted ones.
func (e *Engine) decideBatch(s *stream, mediaType string, frames [][]byte, parsed [][][]byte, parseErr []error, now time.Time) ([]FrameAck, *op, error) {
	if err := e.liveForWrite(s, now); err != nil {
		return nil, nil, err
	}
	s.access.Store(now.UnixMilli())
	nm := s.edit()
	acks := make([]FrameAck, len(frames))
	var entries []cachedMsg
	firstRec := nm.RecordNext
	for i, f := range frames {
		ack := FrameAck{Tail: model.Offset(nm.Tail), Closed: nm.Closed, RecordStart: nm.RecordNext, RecordNext: nm.RecordNext}
		switch {
		case nm.Closed:
			ack.Err = &model.ClosedError{Final: model.Offset(nm.Tail)}
		case mediaType != nm.MediaType:
			ack.Err = model.ErrContentTypeMismatch
		case parseErr[i] != nil:
			ack.Err = parseErr[i]
		default:
			unit := unitMessages(nm.Tail, f, parsed[i], s.isJSON)
			if s.isJSON {
				nm.RecordNext += uint64(len(unit)) // records are contiguous across frames
			}
			entries = append(entries, unit...)
			nm.Tail += unitBytes(unit)
			ack.Tail, ack.RecordNext = model.Offset(nm.Tail), nm.RecordNext
		}
		acks[i] = ack
	}
	if len(entries) == 0 {
		return acks, nil, nil
	}
	nm.LastWriteMs, nm.AccessMs = now.UnixMilli(), now.UnixMilli()
	o := &op{s: s, ch: storage.Change{SID: s.sid, Messages: entries, Records: s.isJSON,
		FirstRecord: firstRec, Meta: s.metaRefresh(nm, now, e.closing.Load())},
		pub: func() { s.publish(nm, entries) },
	}
	if err := e.q.pushOwn(o); err != nil { // AppendBatch awaits it: awaitOwn
		return nil, nil, err
	}
	s.m, s.lastLSN = nm, o.lsn
	return acks, o, nil
}
