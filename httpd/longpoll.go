package httpd

import (
	"context"
	"errors"
	"net/http"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/model"
)

// longPoll serves GET {stream}?live=long-poll (B-5.7, B-8-05, B-8-07): data at or after
// the offset is returned at once; otherwise it waits up to the timeout for data (200),
// closure (204 + Stream-Closed) or nothing (204).
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
	from := q.from
	for {
		res, err := lr.Read(engine.ReadRequest{From: from})
		if err != nil {
			return err
		}
		if len(res.Data) > 0 {
			return h.longPollData(w, r, q, res)
		}
		if res.EOF {
			h.longPollEmpty(w, q, res.Next, true)
			return nil
		}
		from = model.OffsetSpec{Kind: model.SpecAt, At: res.Next}
		if _, err := lr.Wait(ctx, res.Next); err != nil {
			if errors.Is(err, context.DeadlineExceeded) && r.Context().Err() == nil {
				h.longPollEmpty(w, q, res.Next, false)
				return nil
			}
			if r.Context().Err() != nil {
				return nil
			}
			return err
		}
	}
}

// longPollData answers with data: the catch-up headers plus Stream-Cursor (B-5.7-04).
func (h *Handler) longPollData(w http.ResponseWriter, r *http.Request, q readQuery, res engine.ReadResult) error {
	hd := w.Header()
	setReadHeaders(hd, res)
	hd.Set(hCursor, h.nextCursor(q.cursor))
	hd.Set("Cache-Control", h.readCacheControl(res))
	etag := makeETag(res.Info.ID, q.offsetRaw, res.Next, res.EOF)
	hd.Set("ETag", etag)
	if etagMatches(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	writeData(w, r, res)
	return nil
}

// longPollEmpty answers 204: Stream-Next-Offset, Stream-Up-To-Date, Stream-Cursor while
// open, Stream-Closed when closed (B-5.7-05, B-5.7-06).
func (h *Handler) longPollEmpty(w http.ResponseWriter, q readQuery, next model.Offset, closed bool) {
	hd := w.Header()
	hd.Set(hNextOffset, next.String())
	hd.Set(hUpToDate, "true")
	hd.Set("Cache-Control", ccNoStore)
	if closed {
		hd.Set(hStreamClosed, "true")
	} else {
		hd.Set(hCursor, h.nextCursor(q.cursor))
	}
	w.WriteHeader(http.StatusNoContent)
}
