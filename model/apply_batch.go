package model

import (
	"fmt"
	"time"
)

// AppendBatch is POST {stream}/append-batch (extension §4): the request's Content-Type,
// the per-append controls it must not carry (§4.2) as sent, and the framed body.
type AppendBatch struct {
	Stream        StreamKey
	ContentType   *string
	ProducerID    *string
	ProducerEpoch *string
	ProducerSeq   *string
	StreamSeq     *string
	Closed        *string
	RecordMatch   *string
	Body          []byte
}

// Name implements Command.
func (c AppendBatch) Name() string {
	out := fmt.Sprintf("POST /%s/append-batch ct=%s", c.Stream, show(c.ContentType))
	for _, h := range c.controls() {
		if h.v != nil {
			out += fmt.Sprintf(" %s=%s", h.name, show(h.v))
		}
	}
	frames, err := ParseBatchFrames(c.Body)
	if err != nil {
		return out + fmt.Sprintf(" body=%q", clip(c.Body))
	}
	out += fmt.Sprintf(" frames=%d:", len(frames))
	for i, f := range frames {
		if i == 6 {
			return out + " ..."
		}
		out += fmt.Sprintf(" %q", clip(f))
	}
	return out
}

type namedHeader struct {
	name string
	v    *string
}

// controls are the headers append-batch refuses (§4.2, D5).
func (c AppendBatch) controls() []namedHeader {
	return []namedHeader{{"Producer-Id", c.ProducerID}, {"Producer-Epoch", c.ProducerEpoch},
		{"Producer-Seq", c.ProducerSeq}, {"Stream-Seq", c.StreamSeq}, {"Stream-Closed", c.Closed},
		{"Stream-Record-Match", c.RecordMatch}}
}

// FrameAck is one acknowledgement of an append-batch response (extension §4.3): Status
// is the frame's own status (204, or the status of its error), Err its error;
// NextOffset is the tail after the frame (an error leaves it unchanged: D5 reports it
// on every acknowledgement), Closed reports a closed stream.
type FrameAck struct {
	Status     int
	Err        error
	NextOffset Offset
	Closed     bool
	// RecordStart and RecordNext are the frame's record range on a JSON stream (the
	// empty range at N for a failed frame: it assigns no ordinal, extension §6.11).
	RecordStart, RecordNext *uint64
}

// appendBatch: POST {stream}/append-batch, decided in this order:
//
//  1. 400 bad ids.
//  2. 400 INVALID_BATCH when any of Producer-Id/Epoch/Seq, Stream-Seq, Stream-Closed or
//     Stream-Record-Match is present, whatever its value (§4.2, D5).
//  3. 400 MISSING_CONTENT_TYPE without Content-Type (D5), 400 INVALID_CONTENT_TYPE when
//     it is malformed.
//  4. The framing (ParseBatchFrames): 400 INVALID_BATCH, or 413 past 512 frames (§4.1).
//  5. 404 for a missing or expired stream (D5: the whole request fails). The request
//     restarts the sliding TTL like any POST.
//  6. 200 with one acknowledgement per frame, in order (§4.3, §4.4): each frame is an
//     append of its own, without producer, Stream-Seq or close, with the request's
//     Content-Type (decideAppend: closed 409, type mismatch 409, invalid JSON or "[]"
//     400, else 204). A failed frame changes nothing; later frames still run (§4.3:
//     "a successful outer 200 OK does not mean every frame committed").
func (s State) appendBatch(c AppendBatch, now time.Time) (State, Result) {
	if err := checkKey(c.Stream); err != nil {
		return s, fail(StatusBadRequest, err)
	}
	for _, h := range c.controls() {
		if h.v != nil {
			return s, fail(StatusBadRequest, fmt.Errorf("%w: %s is not supported on append-batch", ErrBadBatch, h.name))
		}
	}
	if c.ContentType == nil || *c.ContentType == "" {
		return s, fail(StatusBadRequest, ErrMissingContentType)
	}
	mt, err := MediaType(*c.ContentType)
	if err != nil {
		return s, fail(StatusBadRequest, ErrBadContentType)
	}
	frames, err := ParseBatchFrames(c.Body)
	if err != nil {
		status := StatusBadRequest
		if ErrorCode(err) == ErrTooLarge.Code {
			status = StatusTooLarge
		}
		return s, fail(status, err)
	}
	s, st, res := s.touchLive(c.Stream, now)
	if st == nil {
		return s, res
	}
	acks := make([]FrameAck, len(frames))
	for i, f := range frames {
		r := st.decideAppend(appendRequest{body: f, mediaType: mt})
		acks[i] = FrameAck{Status: r.Status, Err: r.Err, NextOffset: st.tail(), Closed: st.closed}
		if st.isJSON() {
			n := st.recordNext()
			acks[i].RecordStart, acks[i].RecordNext = u64Ptr(n), u64Ptr(n)
			if r.Err == nil {
				acks[i].RecordStart = r.RecordStart
			}
		}
	}
	return s, Result{Status: StatusOK, ContentType: "application/json", Acks: acks}.advertise(st)
}
