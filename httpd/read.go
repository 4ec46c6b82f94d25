package httpd

import (
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/model"
)

// read serves GET {stream}: catch-up (B-5.6), long-poll (B-5.7) or SSE (B-5.8); record-
// aware reads (extension §6.6) are selected by their parameters.
func (h *Handler) read(w http.ResponseWriter, r *http.Request, t target) error {
	q, vals, err := parseReadQuery(r)
	if err != nil {
		return err
	}
	if rq, ok, err := parseRecordQuery(vals, q); err != nil || ok {
		if err != nil {
			return err
		}
		return h.recordRead(w, r, t, q, rq)
	}
	switch q.live {
	case liveLongPoll:
		return h.longPoll(w, r, t, q)
	case liveSSE:
		return h.sse(w, r, t, q)
	}
	return h.catchUp(w, r, t, q)
}

// catchUp serves a catch-up read (B-5.6, B-8-04, B-10-03).
func (h *Handler) catchUp(w http.ResponseWriter, r *http.Request, t target, q readQuery) error {
	res, err := h.store.Read(t.key, engine.ReadRequest{From: q.from})
	if err != nil {
		return err
	}
	hd := w.Header()
	setReadHeaders(hd, res)
	if q.from.Kind == model.SpecNow {
		hd.Set("Cache-Control", ccNoStore)
	} else {
		hd.Set("Cache-Control", h.readCacheControl(res))
		etag := makeETag(res.Info.ID, q.offsetRaw, res.Next, res.EOF)
		hd.Set("ETag", etag)
		if etagMatches(r.Header.Get("If-None-Match"), etag) {
			w.WriteHeader(http.StatusNotModified)
			return nil
		}
	}
	writeData(w, r, res)
	return nil
}

// setReadHeaders sets the headers of a 200 read: Content-Type, Stream-Next-Offset,
// Stream-Up-To-Date, Stream-Closed (B-5.6-04..06).
func setReadHeaders(hd http.Header, res engine.ReadResult) {
	hd.Set(hContentType, res.Info.ContentType)
	hd.Set(hNextOffset, res.Next.String())
	if res.UpToDate {
		hd.Set(hUpToDate, "true")
	}
	if res.EOF {
		hd.Set(hStreamClosed, "true")
	}
}

// writeData writes a read's body: the bytes, or for JSON streams the array of its
// messages (B-9.1-04).
func writeData(w http.ResponseWriter, r *http.Request, res engine.ReadResult) {
	body := res.Data
	if res.Info.JSON() {
		body = model.JSONArrayFromCanonical(make([]byte, 0, len(res.Data)+2), res.Data)
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// readCacheControl applies A-04: data and EOF are publicly cacheable (max-age capped by
// an absolute expiry); the empty tail of an open stream is no-cache.
func (h *Handler) readCacheControl(res engine.ReadResult) string {
	if len(res.Data) == 0 && !res.EOF {
		return ccNoCache
	}
	if exp := res.Info.ExpiresAt; exp != nil {
		left := int(time.Until(*exp) / time.Second)
		if left < 60 {
			return "public, max-age=" + strconv.Itoa(max(left, 0)) + ", stale-while-revalidate=300"
		}
	}
	return ccPublic
}

// makeETag renders "<incarnation>:<start as given>:<end>[:c]".
func makeETag(id uint64, start string, end model.Offset, closed bool) string {
	var b strings.Builder
	b.WriteByte('"')
	b.WriteString(strconv.FormatUint(id, 10))
	b.WriteByte(':')
	b.WriteString(start)
	b.WriteByte(':')
	b.WriteString(end.String())
	if closed {
		b.WriteString(":c")
	}
	b.WriteByte('"')
	return b.String()
}

// etagMatches implements If-None-Match: any listed entry equal to etag (W/ ignored), or *.
func etagMatches(header, etag string) bool {
	if header == "" {
		return false
	}
	for _, part := range strings.Split(header, ",") {
		p := strings.TrimPrefix(strings.TrimSpace(part), "W/")
		if p == "*" || p == etag {
			return true
		}
	}
	return false
}

// nextCursor computes a live response's cursor (B-10-06, B-10-07, A-05).
func (h *Handler) nextCursor(client string) string {
	return model.NextCursor(h.now(), client, 1+rand.Uint64N(3600))
}

// head serves HEAD {stream} (B-5.5, extension §2.4, §6.5).
func (h *Handler) head(w http.ResponseWriter, r *http.Request, t target) error {
	info, err := h.store.Head(t.key)
	if err != nil {
		return err
	}
	hd := w.Header()
	setInfoHeaders(hd, info)
	hd.Set("Cache-Control", ccNoStore)
	hd.Set("ETag", makeETag(info.ID, "-1", info.Tail, info.Closed))
	w.WriteHeader(http.StatusOK)
	return nil
}

// setInfoHeaders sets the metadata headers of HEAD (B-5.5-02) and of its extensions.
func setInfoHeaders(hd http.Header, info engine.StreamInfo) {
	hd.Set(hContentType, info.ContentType)
	hd.Set(hNextOffset, info.Tail.String())
	if info.TTL != nil {
		hd.Set(hTTL, strconv.FormatUint(*info.TTL, 10))
	}
	if info.ExpiresAt != nil {
		hd.Set(hExpiresAt, model.FormatExpiresAt(*info.ExpiresAt))
	}
	if info.Closed {
		hd.Set(hStreamClosed, "true")
	}
	if info.JSON() {
		hd.Set(hExtensions, extRecords)
		hd.Set(hRecordFirst, strconv.FormatUint(info.RecordFirst, 10))
		hd.Set(hRecordNext, strconv.FormatUint(info.RecordNext, 10))
	}
	if s := info.Snapshot; s != nil {
		hd.Set(hSnapshotOffset, s.Offset.String())
		hd.Set(hSnapshotDigest, s.Digest)
	}
}

// delete serves DELETE {stream} (B-5.4-01).
func (h *Handler) delete(w http.ResponseWriter, r *http.Request, t target) error {
	if err := h.store.Delete(t.key); err != nil {
		return err
	}
	w.Header().Set("Cache-Control", ccNoStore)
	w.WriteHeader(http.StatusNoContent)
	return nil
}
