package httpd

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/model"
)

// sse serves GET {stream}?live=sse (B-5.8, B-8-06, B-8-07, D6, D9, extension §6.9): one
// data event per read chunk on text and JSON streams, per message on binary ones, per
// record with the envelope view, each followed by a control event in the same write; no
// data event ends inside a UTF-8 sequence (holdBack); keep-alive control events while
// caught up; the final control event after closure; the response ends after SSEMaxAge.
func (h *Handler) sse(w http.ResponseWriter, r *http.Request, t target, q readQuery) error {
	lr, info, err := h.store.OpenLive(t.key)
	if err != nil {
		return err
	}
	st, err := h.stalls.reserve(h.stalls.stepSize(), time.Now().Add(sseCatchUpTimeout), nil)
	if err != nil {
		lr.Close()
		return err
	}
	enc := sseEncoding(info, q)
	q.bounds = enc == encBase64
	raw, err := lr.Read(q.firstRequest())
	if err != nil {
		h.stalls.release(st)
		lr.Close()
		return err
	}
	res, end := holdBack(enc, raw)
	setSSEHeaders(w.Header(), info, enc)
	deadline := time.Now().Add(h.cfg.SSEMaxAge)
	sub := &sseSub{q: q.parked(), enc: enc, deadline: monoOf(deadline)}
	if hijacked, err := hijackSSE(&sub.c, w, r, h.cfg.SSESendBuffer); hijacked {
		if err != nil {
			h.stalls.release(st)
			lr.Close()
			return nil
		}
		h.stalls.arm(st, sub.c.reset)
		h.sseHijacked(sub, t.key, lr, raw, st)
		return nil
	}
	h.stalls.release(st) // served through net/http: writeHeld counts its writes
	defer lr.Close()
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	var buf bytes.Buffer
	for sent := false; ; {
		if !sent || len(res.Data) > 0 || res.EOF {
			buf.Reset()
			h.writeEvents(&buf, enc, q, res)
			res.Data, raw.Data = nil, nil // only the encoded events are held while the write blocks
			if err := h.writeHeld(w, r, buf.Bytes(), true); err != nil || res.EOF {
				return nil
			}
			sent = true
		}
		if res.UpToDate && !h.sseWait(r.Context(), w, rc, lr, q, res, end, deadline) {
			return nil
		}
		if raw, err = lr.Read(q.nextRequest(res)); err != nil {
			return nil
		}
		res, end = holdBack(enc, raw)
	}
}

// holdBack is a read as SSE sends it (D9): on text streams without the incomplete UTF-8
// sequence at its end, which waits for the bytes that complete it (res.Next stops before
// it), unless the stream closed on it or nothing else would go out. end is where the read
// really ended: live reads wait for data past it.
func holdBack(enc sseEnc, res engine.ReadResult) (engine.ReadResult, model.Offset) {
	end := res.Next
	if enc != encText || res.EOF {
		return res, end
	}
	h := model.HeldTail(res.Data)
	if h == 0 || (h == len(res.Data) && !res.UpToDate) {
		return res, end
	}
	res.Data = res.Data[:len(res.Data)-h]
	res.Next -= model.Offset(h)
	return res, end
}

// sseCatchUpTimeout bounds one write while a subscriber catches up on its own goroutine,
// and the wait for room in the live-buffer budget before a read.
const sseCatchUpTimeout = 30 * time.Second

// sseReserve is the least one SSE catch-up step reserves in the live-buffer budget before
// it reads: a read of sseReadBytes, encoded. Steps reserve the larger of it and what recent
// steps held (stallSet.step: messages larger than a read make larger steps), and resize
// to the encoding once known.
const sseReserve = 2 * sseReadBytes

// sseHijacked serves the SSE response of sub (on its hijacked connection): it catches up
// on this goroutine, then parks the subscriber in its stream's hub and returns. Each step
// (read, encode, write) holds its bytes in the live-buffer budget, reserved before the read
// (st, for raw): a reader that does not read holds one read's encoded events (reads are
// about sseReadBytes) and may be cut (issue 20).
func (h *Handler) sseHijacked(sub *sseSub, key model.StreamKey, lr LiveReader, raw engine.ReadResult, st *stall) {
	c, q, enc := &sub.c, sub.query(), sub.enc
	res, end := holdBack(enc, raw)
	raw.Data = nil
	for {
		buf := newChunkBuf(chunkPool.Get().(*bytes.Buffer))
		buf.Grow(len(res.Data)*4/3 + 512)
		h.writeEvents(buf, enc, q, res)
		res.Data = nil
		h.stalls.resize(st, buf.Cap())
		h.stalls.noteStep(buf.Len())
		_, err := c.write(frameChunk(buf), sseCatchUpTimeout)
		putChunkBuf(buf)
		h.stalls.release(st)
		if err != nil {
			c.abort()
			lr.Close()
			return
		}
		if res.EOF {
			c.finish()
			lr.Close()
			return
		}
		if res.UpToDate {
			break
		}
		if st, err = h.stalls.reserve(h.stalls.stepSize(), time.Now().Add(sseCatchUpTimeout), c.reset); err != nil {
			c.finish()
			lr.Close()
			return
		}
		if raw, err = lr.Read(q.nextRequest(res)); err != nil {
			h.stalls.release(st)
			c.finish()
			lr.Close()
			return
		}
		res, end = holdBack(enc, raw)
		raw.Data = nil
	}
	sub.at(res, end)
	sub.lastSent = monoNow()
	sub.c.park()
	h.hubs.join(h, key, res.Info.ID, lr, sub)
}

// sseResume takes back a parked subscriber whose socket could not take an event at once
// (the hub does not wait for anyone): on a goroutine of its own it writes the rest of the
// interrupted chunk, catches up from there and parks again, so a slow or stalled reader
// delays no other subscriber. res is the read the chunk came from (zero for keep-alives).
func (h *Handler) sseResume(key model.StreamKey, s *sseSub, rest []byte, res engine.ReadResult) {
	if err := s.c.unpark(); err != nil {
		return
	}
	if err := s.c.sendHeld(&h.stalls, rest, len(rest), sseCatchUpTimeout); err != nil {
		s.c.abort()
		return
	}
	if res.EOF {
		s.c.finish()
		return
	}
	if res.Info.ID != 0 {
		s.at(res, s.end)
	}
	lr, info, err := h.store.OpenLive(key)
	if err != nil {
		s.c.finish() // deleted meanwhile: the client learns it when it reconnects
		return
	}
	st, err := h.stalls.reserve(h.stalls.stepSize(), time.Now().Add(sseCatchUpTimeout), s.c.reset)
	if err != nil {
		lr.Close()
		s.c.finish()
		return
	}
	next, err := lr.Read(s.query().nextRequest(engine.ReadResult{Next: s.next, RecordNext: s.nextRec}))
	if err != nil || info.ID != s.id {
		h.stalls.release(st)
		lr.Close()
		s.c.finish() // gone behind retention, or another incarnation: the client resumes
		return
	}
	s.dead = false // the hub let s go after dropping it from its list (sseHub.compact)
	h.sseHijacked(s, key, lr, next, st)
}

// setSSEHeaders sets the head of an SSE response (B-5.8-01, B-5.8-02, extension §6.9).
func setSSEHeaders(hd http.Header, info engine.StreamInfo, enc sseEnc) {
	hd.Set(hContentType, "text/event-stream")
	hd.Set("Cache-Control", ccNoCache)
	hd.Set("X-Accel-Buffering", "no")
	switch {
	case enc == encBase64:
		hd.Set(hSSEEncoding, "base64")
	case enc == encEnvelope:
		hd.Set(hDataContentType, "application/vnd.durable-stream-record+json")
	}
	if info.JSON() {
		hd.Set(hExtensions, extRecords)
	}
}

// writeEvents renders a read: its data event(s), each followed by a control event.
func (h *Handler) writeEvents(buf *bytes.Buffer, enc sseEnc, q readQuery, res engine.ReadResult) {
	if enc == encBase64 && len(res.Ends) > 1 {
		h.writeMessageEvents(buf, q, res)
		return
	}
	if enc != encEnvelope || len(res.Data) == 0 {
		if len(res.Data) > 0 {
			writeDataEvent(buf, enc, res.Data)
		}
		h.writeControlEvent(buf, q, res.Info.RecordFirst, res.Next, res.RecordNext, res.UpToDate, res.EOF)
		return
	}
	data, rec, next := res.Data, res.RecordStart, res.Start
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n') + 1
		buf.WriteString("event: data\ndata:")
		buf.Write(appendEnvelopes(buf.AvailableBuffer(), rec, data[:i], '\n'))
		buf.WriteByte('\n')
		rec, next, data = rec+1, next+model.Offset(i), data[i:]
		last := len(data) == 0
		h.writeControlEvent(buf, q, res.Info.RecordFirst, next, rec, last && res.UpToDate, last && res.EOF)
	}
}

// writeMessageEvents renders a binary read as one base64 data event per message (append
// unit or append-batch frame), each followed by its control event (D9, A-18): base64 of
// a concatenation would lose the boundaries the stream keeps.
func (h *Handler) writeMessageEvents(buf *bytes.Buffer, q readQuery, res engine.ReadResult) {
	from := 0
	for i, to := range res.Ends {
		writeDataEvent(buf, encBase64, res.Data[from:to])
		last := i == len(res.Ends)-1
		h.writeControlEvent(buf, q, res.Info.RecordFirst, res.Start+model.Offset(to), 0, last && res.UpToDate, last && res.EOF)
		from = to
	}
}

// sseWait waits for data past end, sending keep-alive control events (at res) every
// SSEKeepAlive. It reports false when the response must end (client gone, stream deleted,
// max age reached).
func (h *Handler) sseWait(ctx context.Context, w http.ResponseWriter, rc *http.ResponseController, lr LiveReader, q readQuery, res engine.ReadResult, end model.Offset, deadline time.Time) bool {
	for {
		wait := min(h.cfg.SSEKeepAlive, time.Until(deadline))
		if wait <= 0 {
			return false
		}
		wctx, cancel := context.WithTimeout(ctx, wait)
		_, err := lr.Wait(wctx, end)
		cancel()
		switch {
		case err == nil:
			return true
		case ctx.Err() != nil, !errors.Is(err, context.DeadlineExceeded):
			return false
		case !time.Now().Before(deadline):
			return false
		}
		var buf bytes.Buffer
		h.writeControlEvent(&buf, q, res.Info.RecordFirst, res.Next, res.RecordNext, true, false)
		if _, err := w.Write(buf.Bytes()); err != nil || rc.Flush() != nil {
			return false
		}
	}
}

func at(o model.Offset) model.OffsetSpec { return model.OffsetSpec{Kind: model.SpecAt, At: o} }

// sseEnc is how data events carry a stream's bytes (B-5.8-02, A-20).
type sseEnc uint8

const (
	encText sseEnc = iota
	encJSON
	encBase64
	encEnvelope // one {"record","value"} object per event (extension §6.9)
)

func sseEncoding(info engine.StreamInfo, q readQuery) sseEnc {
	switch {
	case q.rec != nil && q.rec.envelope:
		return encEnvelope
	case info.JSON():
		return encJSON
	case model.IsTextual(info.MediaType):
		return encText
	}
	return encBase64
}

// writeDataEvent renders one data event (B-5.8-03, B-5.8-04, A-17, A-18).
func writeDataEvent(buf *bytes.Buffer, enc sseEnc, data []byte) {
	buf.WriteString("event: data\n")
	switch enc {
	case encBase64:
		buf.WriteString("data:")
		b := buf.AvailableBuffer()
		b = base64.StdEncoding.AppendEncode(b, data)
		buf.Write(b)
		buf.WriteByte('\n')
	case encJSON:
		buf.WriteString("data:")
		buf.Write(model.JSONArrayFromCanonical(buf.AvailableBuffer(), data))
		buf.WriteByte('\n')
	default:
		writeTextLines(buf, data)
	}
	buf.WriteByte('\n')
}

// writeTextLines splits text on CRLF, CR and LF into data: lines (A-17, B-5.8-09).
func writeTextLines(buf *bytes.Buffer, data []byte) {
	for {
		i := bytes.IndexAny(data, "\r\n")
		line := data
		if i >= 0 {
			line = data[:i]
		}
		buf.WriteString("data:")
		if len(line) > 0 && line[0] == ' ' {
			buf.WriteByte(' ')
		}
		buf.Write(line)
		buf.WriteByte('\n')
		if i < 0 {
			return
		}
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
}

// controlEvent is the JSON of a control event (B-5.8-05, extension §6.9).
type controlEvent struct {
	StreamNextOffset  string  `json:"streamNextOffset"`
	StreamCursor      string  `json:"streamCursor,omitempty"`
	StreamFirstRecord *uint64 `json:"streamFirstRecord,omitempty"`
	StreamNextRecord  *uint64 `json:"streamNextRecord,omitempty"`
	UpToDate          bool    `json:"upToDate,omitempty"`
	StreamClosed      bool    `json:"streamClosed,omitempty"`
}

// writeControlEvent renders a control event; a closing one carries no cursor;
// record-aware reads add the record bounds, first the stream's first record ordinal
// (extension §6.9).
func (h *Handler) writeControlEvent(buf *bytes.Buffer, q readQuery, first uint64, next model.Offset, nextRec uint64, upToDate, closed bool) {
	ev := controlEvent{StreamNextOffset: next.String(), UpToDate: upToDate || closed, StreamClosed: closed}
	if !closed {
		ev.StreamCursor = h.nextCursor(q.cursor)
	}
	if q.rec != nil {
		ev.StreamFirstRecord, ev.StreamNextRecord = &first, &nextRec
	}
	b, _ := json.Marshal(ev)
	buf.WriteString("event: control\ndata:")
	buf.Write(b)
	buf.WriteString("\n\n")
}
