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

// read serves GET {stream}: catch-up (B-5.6), long-poll (B-5.7) or SSE (B-5.8), by offset
// or, with record parameters, by record (extension §6.6-§6.9).
func (h *Handler) read(w http.ResponseWriter, r *http.Request, t target) error {
	q, err := parseReadQuery(r)
	if err != nil {
		return err
	}
	switch q.live {
	case liveLongPoll:
		return h.longPoll(w, r, t, q)
	case liveSSE:
		return h.sse(w, r, t, q)
	}
	return h.catchUp(w, r, t, q)
}

// catchUp serves a catch-up read (B-5.6, B-8-04, B-10-03, extension §6.7).
func (h *Handler) catchUp(w http.ResponseWriter, r *http.Request, t target, q readQuery) error {
	res, err := h.store.Read(t.key, q.firstRequest())
	if err != nil {
		return err
	}
	return h.writeRead(w, r, q, res, false)
}

// writeRead renders a 200 read response (catch-up, or long-poll when live): headers,
// cache validators, and the body.
func (h *Handler) writeRead(w http.ResponseWriter, r *http.Request, q readQuery, res engine.ReadResult, live bool) error {
	hd := w.Header()
	setReadHeaders(hd, q, res)
	if live {
		hd.Set(hCursor, h.nextCursor(q.cursor))
	}
	if q.isNow() && !live {
		hd.Set("Cache-Control", ccNoStore)
	} else {
		hd.Set("Cache-Control", h.readCacheControl(res))
		if notModified(w, r, makeETag(res.Info.ID, q.etagStart(res), res.Next, res.EOF)) {
			return nil
		}
	}
	body := renderBody(q, res)
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_ = h.writeHeld(w, r, body, false)
	}
	return nil
}

// setReadHeaders sets the headers of a 200 read: Content-Type, Stream-Next-Offset,
// Stream-Up-To-Date, Stream-Closed (B-5.6-04..06), and for record-aware reads the record
// headers (extension §6.7).
func setReadHeaders(hd http.Header, q readQuery, res engine.ReadResult) {
	ct := res.Info.ContentType
	if q.rec != nil {
		ct = "application/x-ndjson"
		if q.rec.envelope {
			ct = "application/vnd.durable-stream-records+ndjson"
		}
		setRecordBounds(hd, res.Info)
		hd.Set(hRecordStart, strconv.FormatUint(res.RecordStart, 10))
		hd.Set(hRecordNext, strconv.FormatUint(res.RecordNext, 10))
	} else if res.Info.JSON() {
		hd.Set(hExtensions, extRecords)
	}
	hd.Set(hContentType, ct)
	hd.Set(hNextOffset, res.Next.String())
	if res.UpToDate {
		hd.Set(hUpToDate, "true")
	}
	if res.EOF {
		hd.Set(hStreamClosed, "true")
	}
}

// renderBody is a read's body: the bytes; for JSON streams the array of the messages
// (B-9.1-04); for record-aware reads NDJSON or envelopes (extension §6.7, §6.8).
func renderBody(q readQuery, res engine.ReadResult) []byte {
	switch {
	case q.rec != nil && q.rec.envelope:
		return appendEnvelopes(nil, res.RecordStart, res.Data, '\n')
	case q.rec != nil:
		return res.Data
	case res.Info.JSON():
		return model.JSONArrayFromCanonical(make([]byte, 0, len(res.Data)+2), res.Data)
	}
	return res.Data
}

// appendEnvelopes renders canonical JSON messages as {"record":r,"value":v} objects, each
// followed by sep (extension §6.8).
func appendEnvelopes(dst []byte, first uint64, canonical []byte, sep byte) []byte {
	r := first
	for len(canonical) > 0 {
		i := strings.IndexByte(string(canonical), '\n')
		if i < 0 {
			i = len(canonical)
		}
		dst = append(dst, `{"record":`...)
		dst = strconv.AppendUint(dst, r, 10)
		dst = append(dst, `,"value":`...)
		dst = append(dst, canonical[:i]...)
		dst = append(dst, '}', sep)
		r++
		if i == len(canonical) {
			break
		}
		canonical = canonical[i+1:]
	}
	return dst
}

// readCacheControl applies A-04: data and EOF are cacheable, publicly or (CachePrivate)
// privately, with max-age capped by an absolute expiry; the empty tail of an open stream
// is no-cache.
func (h *Handler) readCacheControl(res engine.ReadResult) string {
	if len(res.Data) == 0 && !res.EOF {
		return ccNoCache
	}
	scope, full := "public", ccPublic
	if h.cfg.CachePrivate {
		scope, full = "private", ccPrivate
	}
	if exp := res.Info.ExpiresAt; exp != nil {
		left := int(time.Until(*exp) / time.Second)
		if left < 60 {
			return scope + ", max-age=" + strconv.Itoa(max(left, 0)) + ", stale-while-revalidate=300"
		}
	}
	return full
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

// notModified sets the response's ETag and answers 304 when the request's If-None-Match
// names it (B-10-03): every response that carries an ETag honours it (issue 18).
func notModified(w http.ResponseWriter, r *http.Request, etag string) bool {
	w.Header().Set("ETag", etag)
	if !etagMatches(r.Header.Get("If-None-Match"), etag) {
		return false
	}
	w.WriteHeader(http.StatusNotModified)
	return true
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
	if !notModified(w, r, makeETag(info.ID, "-1@"+strconv.FormatUint(uint64(info.RetainedFrom), 10), info.Tail, info.Closed)) {
		setHeadBodySize(w, headBodySize(info))
		w.WriteHeader(http.StatusOK)
	}
	return nil
}

// headBodySize is the size of the body a GET from the start would send (its ETag is the
// HEAD's): the retained bytes or, for a JSON stream, their array (each message's "\n"
// becomes a ',' and the brackets are added: one byte more, "[]" when empty). A GET cut at
// the read's cap sends at least minCompressBytes, as the HEAD counts.
func headBodySize(info engine.StreamInfo) int {
	n := int(info.Tail - info.RetainedFrom)
	switch {
	case info.JSON() && n == 0:
		return 2
	case info.JSON():
		return n + 1
	}
	return n
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
		setRecordBounds(hd, info)
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
