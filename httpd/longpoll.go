package httpd

import (
	"context"
	"net/http"
	"strconv"

	"github.com/dsd-project/dsd/engine"
)

// longPoll serves GET {stream}?live=long-poll (B-5.7, B-8-05, B-8-07, extension §6.9):
// data at or after the start is returned at once; otherwise it waits up to the timeout
// for data (200), closure (204 + Stream-Closed) or nothing (204).
func (h *Handler) longPoll(w http.ResponseWriter, r *http.Request, t target, q readQuery) error {
	lr, _, err := h.store.OpenLive(t.key)
	if err != nil {
		return err
	}
	defer lr.Close()
	timeout := h.cfg.LongPollTimeout
	if q.timeout > 0 {
		timeout = q.timeout
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	req := q.firstRequest()
	for {
		res, err := lr.Read(req)
		if err != nil {
			return err
		}
		if len(res.Data) > 0 {
			return h.writeRead(w, r, q, res, true)
		}
		if res.EOF {
			h.longPollEmpty(w, q, res, true)
			return nil
		}
		req = q.nextRequest(res)
		if _, err := lr.Wait(ctx, res.Next); err != nil {
			if ctx.Err() != nil {
				// Timeout, client gone, or server shutdown: the answer to nothing new.
				h.longPollEmpty(w, q, res, false)
				return nil
			}
			return err
		}
	}
}

// longPollEmpty answers 204: Stream-Next-Offset, Stream-Up-To-Date, Stream-Cursor while
// open, Stream-Closed when closed (B-5.7-05, B-5.7-06), record bounds in record mode.
func (h *Handler) longPollEmpty(w http.ResponseWriter, q readQuery, res engine.ReadResult, closed bool) {
	hd := w.Header()
	setOffset(hd, hNextOffset, res.Next)
	hd.Set(hUpToDate, "true")
	hd.Set("Cache-Control", ccNoStore)
	if q.rec != nil {
		setRecordBounds(hd, res.Info)
		hd.Set(hRecordStart, strconv.FormatUint(res.RecordStart, 10))
		hd.Set(hRecordNext, strconv.FormatUint(res.RecordNext, 10))
	} else if res.Info.JSON() {
		hd.Set(hExtensions, extRecords)
	}
	if closed {
		hd.Set(hStreamClosed, "true")
	} else {
		hd.Set(hCursor, h.nextCursor(q.cursor))
	}
	w.WriteHeader(http.StatusNoContent)
}
