package httpd

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/dsd-project/dsd/model"
)

// Append-batch limits (extension §4.1, D5).
const (
	maxBatchFrames = 512
	maxBatchBytes  = 32 << 20
)

// batchUnsupported are the per-append controls append-batch refuses (extension §4.2, D5).
var batchUnsupported = []string{hProducerID, hProducerEpoch, hProducerSeq, hStreamSeq, hStreamClosed, hRecordMatch}

// frameAck is one element of the append-batch response (extension §4.3, §6.11, D5).
type frameAck struct {
	Status           int     `json:"status"`
	StreamNextOffset string  `json:"stream_next_offset,omitempty"`
	StreamClosed     bool    `json:"stream_closed,omitempty"`
	ErrorCode        string  `json:"error_code,omitempty"`
	Error            string  `json:"error,omitempty"`
	RecordStart      *uint64 `json:"stream_record_start,omitempty"`
	RecordNext       *uint64 `json:"stream_record_next,omitempty"`
}

// appendBatch serves POST {stream}/append-batch (extension §4): each frame is its own
// logical append, acknowledged in order inside a 200.
func (h *Handler) appendBatch(w http.ResponseWriter, r *http.Request, t target) error {
	for _, name := range batchUnsupported {
		if _, ok := r.Header[name]; ok {
			return fmt.Errorf("%w: %s", model.ErrBadBatch, name+" is not supported on append-batch")
		}
	}
	ct := r.Header.Get(hContentType)
	if ct == "" {
		return model.ErrMissingContentType
	}
	mt, err := model.MediaType(ct)
	if err != nil {
		return err
	}
	body, done, err := h.readBody(w, r, min(h.cfg.MaxBody, maxBatchBytes), nil) // frames are judged before the stream (model)
	defer done()
	if err != nil {
		return err
	}
	frames, err := ParseFrames(body)
	if err != nil {
		return err
	}
	acks, isJSON, err := h.store.AppendBatch(t.key, mt, frames)
	if err != nil {
		return err
	}
	out := make([]frameAck, len(acks))
	for i, a := range acks {
		fa := frameAck{Status: http.StatusNoContent, StreamNextOffset: a.Tail.String(), StreamClosed: a.Closed}
		if a.Err != nil {
			st, known := errorStatus(a.Err)
			fa.Status, fa.ErrorCode, fa.Error = st, model.ErrorCode(a.Err), clientMessage(a.Err, st, known)
		}
		if isJSON {
			rs, rn := a.RecordStart, a.RecordNext
			fa.RecordStart, fa.RecordNext = &rs, &rn
		}
		out[i] = fa
	}
	b, _ := json.Marshal(out)
	hd := w.Header()
	hd.Set(hContentType, "application/json")
	hd.Set("Cache-Control", ccNoStore)
	hd.Set("Content-Length", strconv.Itoa(len(b)))
	if isJSON {
		hd.Set(hExtensions, extRecords)
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
	return nil
}

// ParseFrames splits an append-batch body into frames: uint32 big-endian payload length,
// then the payload (extension §4.1). Errors: model.ErrBadBatch for an empty body, a
// zero-length frame or a truncated frame; model.ErrTooLarge past 512 frames.
func ParseFrames(body []byte) ([][]byte, error) {
	if len(body) == 0 {
		return nil, fmt.Errorf("%w: %s", model.ErrBadBatch, "empty batch")
	}
	var frames [][]byte
	for len(body) > 0 {
		if len(body) < 4 {
			return nil, fmt.Errorf("%w: %s", model.ErrBadBatch, "truncated frame header")
		}
		n := binary.BigEndian.Uint32(body)
		body = body[4:]
		switch {
		case n == 0:
			return nil, fmt.Errorf("%w: %s", model.ErrBadBatch, "zero-length frame")
		case uint64(n) > uint64(len(body)):
			return nil, fmt.Errorf("%w: %s", model.ErrBadBatch, "truncated frame")
		case len(frames) == maxBatchFrames:
			return nil, fmt.Errorf("%w: %s", model.ErrTooLarge, "more than 512 frames")
		}
		frames = append(frames, body[:n:n])
		body = body[n:]
	}
	return frames, nil
}
