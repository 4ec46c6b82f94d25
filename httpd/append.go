package httpd

import (
	"net/http"
	"strconv"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/model"
)

// append serves POST {stream} (B-5.2, B-5.2.1, B-5.3).
// The body is read after the syntax checks and, when one is pending, after a read-only
// look-up of the stream: a missing stream is answered before its body (A-07 steps 1-2).
func (h *Handler) append(w http.ResponseWriter, r *http.Request, t target) error {
	b, err := h.openBody(w, r, h.cfg.MaxBody)
	defer b.recycle()
	if err != nil {
		return err
	}
	pending, err := b.pending()
	if err != nil {
		return err
	}
	req, err := parseAppend(r, pending)
	if err != nil {
		return b.refuse(err)
	}
	if pending {
		if err := h.streamExists(t.key)(); err != nil {
			return b.refuse(err)
		}
	}
	if req.Frame, err = b.framed(); err != nil {
		return err
	}
	if len(req.Frame) > 0 {
		req.Body = req.Frame[1:]
	}
	res, err := h.store.Append(t.key, req)
	if err != nil {
		return err
	}
	hd := w.Header()
	setOffset(hd, hNextOffset, res.Tail)
	if res.Closed {
		hd.Set(hStreamClosed, "true")
	}
	if res.ProducerAck {
		hd.Set(hProducerEpoch, strconv.FormatUint(res.ProducerEpoch, 10))
		hd.Set(hProducerSeq, strconv.FormatUint(res.ProducerSeq, 10))
	}
	if res.JSON {
		setRecordAck(hd, res.RecordStart, res.RecordNext)
	}
	status := http.StatusNoContent
	if res.Outcome == engine.Appended && req.Producer != nil {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	return nil
}

// parseAppend reads the append headers: A-07 step 1 (syntax), in order; hasBody says
// whether a body follows.
func parseAppend(r *http.Request, hasBody bool) (engine.AppendRequest, error) {
	hd := r.Header
	req := engine.AppendRequest{Close: model.StreamClosedHeader(first(hd[hStreamClosed]))}
	id, hasID := hd[hProducerID]
	ep, hasEp := hd[hProducerEpoch]
	sq, hasSq := hd[hProducerSeq]
	p, err := model.ParseProducer(first(id), first(ep), first(sq), hasID, hasEp, hasSq)
	if err != nil {
		return req, err
	}
	req.Producer = p
	if !hasBody && !req.Close {
		return req, model.ErrEmptyBody
	}
	if hasBody {
		ct := first(hd[hContentType]) // canonical names: no Get canonicalizing them again
		if ct == "" {
			return req, model.ErrMissingContentType
		}
		if req.MediaType, err = model.MediaType(ct); err != nil {
			return req, err
		}
	}
	if v, ok := hd[hStreamSeq]; ok {
		if v[0] == "" {
			return req, model.ErrBadStreamSeq
		}
		s := v[0]
		req.StreamSeq = &s
	}
	if v, ok := hd[hRecordMatch]; ok {
		n, err := parseUint(v[0])
		if err != nil {
			return req, model.ErrRecordMatchValue
		}
		req.RecordMatch = &n
	}
	return req, nil
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// parseUint parses a non-negative decimal integer without sign or leading zeros.
func parseUint(s string) (uint64, error) {
	if s == "" || (len(s) > 1 && s[0] == '0') || s[0] == '+' {
		return 0, model.ErrBadQuery
	}
	return strconv.ParseUint(s, 10, 64)
}
