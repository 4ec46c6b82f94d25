package httpd

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/model"
)

// putBucket creates a bucket: 201, or 409 when it exists (extension §1.2).
func (h *Handler) putBucket(w http.ResponseWriter, r *http.Request, t target) error {
	created, err := h.store.CreateBucket(t.bucket)
	if err != nil {
		return err
	}
	if !created {
		return model.ErrBucketExists
	}
	w.Header().Set("Cache-Control", ccNoStore)
	w.Header().Set("Location", absoluteURL(r, "/"+t.bucket))
	w.WriteHeader(http.StatusCreated)
	return nil
}

// getBucket returns {bucket_id, streams, created_at_ms} (extension §1.3).
func (h *Handler) getBucket(w http.ResponseWriter, r *http.Request, t target) error {
	info, err := h.store.Bucket(t.bucket)
	if err != nil {
		return err
	}
	return writeJSON(w, r, http.StatusOK, map[string]any{
		"bucket_id": info.ID, "streams": info.Streams, "created_at_ms": info.CreatedAt})
}

// deleteBucket deletes an empty bucket (extension §1.5).
func (h *Handler) deleteBucket(w http.ResponseWriter, r *http.Request, t target) error {
	if t.bucket == h.cfg.CompatBucket {
		return model.ErrBucketReserved // the flat surface needs it (D1)
	}
	if err := h.store.DeleteBucket(t.bucket); err != nil {
		return err
	}
	return noContent(w)
}

// listedStream is one entry of a listing body (extension §1.4; offsets as tokens, D2).
type listedStream struct {
	StreamID      string `json:"stream_id"`
	Status        string `json:"status"`
	ContentType   string `json:"content_type"`
	TailOffset    string `json:"tail_offset"`
	CreatedAtMs   int64  `json:"created_at_ms"`
	LastWriteAtMs int64  `json:"last_write_at_ms"`
}

// listStreams lists a bucket's streams: prefix, after, limit (extension §1.4).
func (h *Handler) listStreams(w http.ResponseWriter, r *http.Request, t target) error {
	q, err := parseListQuery(r)
	if err != nil {
		return err
	}
	list, err := h.store.ListStreams(t.bucket, q)
	if err != nil {
		return err
	}
	streams := make([]listedStream, len(list.Streams))
	for i, s := range list.Streams {
		status := "Open"
		if s.Closed {
			status = "Closed"
		}
		streams[i] = listedStream{StreamID: s.StreamID, Status: status, ContentType: s.ContentType,
			TailOffset: s.Tail.String(), CreatedAtMs: s.CreatedMs, LastWriteAtMs: s.LastWriteMs}
	}
	body := map[string]any{"bucket_id": t.bucket, "prefix": q.Prefix,
		"stream_count": len(streams), "streams": streams, "has_more": list.HasMore,
		"next_cursor": nil}
	if list.HasMore {
		body["next_cursor"] = list.NextCursor
	}
	return writeJSON(w, r, http.StatusOK, body)
}

// parseListQuery reads prefix, after and limit (1..1000, default 1000).
func parseListQuery(r *http.Request) (engine.ListQuery, error) {
	v := r.URL.Query()
	q := engine.ListQuery{Prefix: v.Get("prefix"), After: v.Get("after"), Limit: 1000}
	if l, ok := v["limit"]; ok {
		n, err := strconv.Atoi(l[0])
		if err != nil || n < 1 || n > 1000 || l[0] != strconv.Itoa(n) {
			return q, model.ErrListLimit
		}
		q.Limit = n
	}
	return q, nil
}

// writeJSON renders a JSON body (none on HEAD) with Cache-Control: no-store.
func writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	hd := w.Header()
	hd.Set("Content-Type", "application/json")
	hd.Set("Cache-Control", ccNoStore)
	hd.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(b)
	}
	return nil
}

// absoluteURL is the request's scheme and host followed by path.
func absoluteURL(r *http.Request, path string) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + path
}
