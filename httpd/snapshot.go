package httpd

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/model"
)

// position reads the boundary of a snapshot or retention request: the {offset} path
// segment (URL-decoded, extension §8), or ?record= on JSON streams (§2.2, §6.10). Naming
// the boundary twice (an offset and a record, or two records) is ErrBadRecord: the forms
// are exclusive (§6.6), and neither may be silently dropped.
func position(r *http.Request, t target) (engine.Position, error) {
	v, byRecord := r.URL.Query()["record"]
	if (byRecord && t.param != "") || len(v) > 1 {
		return engine.Position{}, model.ErrBoundaryTwice
	}
	if t.param != "" {
		o, err := parseOffsetToken(t.param)
		if err != nil {
			return engine.Position{}, err
		}
		return engine.Position{Offset: o}, nil
	}
	if !byRecord {
		return engine.Position{}, model.ErrBadOffset
	}
	n, err := parseUint(v[0])
	if err != nil {
		return engine.Position{}, model.ErrBoundaryRecordVal
	}
	return engine.Position{Record: n, ByRecord: true}, nil
}

// publishSnapshot serves PUT {stream}/snapshot/{offset} and PUT {stream}/snapshot?record=
// (extension §2.2): 204 with Stream-Snapshot-Digest.
func (h *Handler) publishSnapshot(w http.ResponseWriter, r *http.Request, t target) error {
	at, err := position(r, t)
	if err != nil {
		return err
	}
	if ct := r.Header.Get(hContentType); ct != "" {
		if _, err := model.MediaType(ct); err != nil {
			return model.ErrBadContentType // before the stream is looked up (model)
		}
	}
	body, done, err := h.readBody(w, r, h.cfg.MaxBody, h.streamExists(t.key))
	defer done()
	if err != nil {
		return err
	}
	req := engine.SnapshotRequest{At: at, ContentType: r.Header.Get(hContentType), Body: body}
	if m, ok := r.Header[hSnapshotMatch]; ok {
		req.Match = &m[0]
	}
	info, err := h.store.PublishSnapshot(t.key, req)
	if err != nil {
		return err
	}
	hd := w.Header()
	hd.Set(hSnapshotOffset, info.Offset.String())
	hd.Set(hSnapshotDigest, info.Digest)
	hd.Set("Cache-Control", ccNoStore)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// advertise sets Stream-Extensions on a response that targets a JSON stream where the
// handler's result does not carry the stream's metadata: sub-resources (redirects,
// snapshots, bootstrap, attrs, append-batch, retention), DELETE and errors (D5 amendment).
func (h *Handler) advertise(hd http.Header, t target) {
	if info, err := h.store.Head(t.key); err == nil && info.JSON() {
		hd.Set(hExtensions, extRecords)
	}
}

// latestSnapshot serves GET {stream}/snapshot: 307 to the visible snapshot (§2.3).
func (h *Handler) latestSnapshot(w http.ResponseWriter, r *http.Request, t target) error {
	info, _, err := h.store.Snapshot(t.key, nil)
	if err != nil {
		return err
	}
	hd := w.Header()
	hd.Set("Location", absoluteURL(r, t.path+"/snapshot/"+url.PathEscape(info.Snapshot.Offset.String())))
	hd.Set(hSnapshotOffset, info.Snapshot.Offset.String())
	hd.Set(hSnapshotDigest, info.Snapshot.Digest)
	hd.Set("Cache-Control", ccNoStore)
	w.WriteHeader(http.StatusTemporaryRedirect)
	return nil
}

// readSnapshot serves GET {stream}/snapshot/{offset} (extension §2.5, §6.10).
func (h *Handler) readSnapshot(w http.ResponseWriter, r *http.Request, t target) error {
	o, err := parseOffsetToken(t.param)
	if err != nil {
		return err
	}
	info, body, err := h.store.Snapshot(t.key, &o)
	if err != nil {
		return err
	}
	snap := info.Snapshot
	hd := w.Header()
	hd.Set(hContentType, snap.ContentType)
	hd.Set(hSnapshotOffset, snap.Offset.String())
	hd.Set(hSnapshotDigest, snap.Digest)
	hd.Set(hNextOffset, snap.Offset.String())
	hd.Set(hUpToDate, strconv.FormatBool(snap.Offset == info.Tail))
	hd.Set("Cache-Control", ccNoStore)
	if info.JSON() {
		setRecordBounds(hd, info)
	}
	if notModified(w, r, `"`+snap.Digest+`"`) {
		return nil // a snapshot at an offset never changes (§2.2: other content is 409)
	}
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
	return nil
}

// deleteSnapshot serves DELETE {stream}/snapshot/{offset} (extension §2.6).
func (h *Handler) deleteSnapshot(w http.ResponseWriter, r *http.Request, t target) error {
	o, err := parseOffsetToken(t.param)
	if err != nil {
		return err
	}
	if err := h.store.DeleteSnapshot(t.key, o); err != nil {
		return err
	}
	w.Header().Set("Cache-Control", ccNoStore)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// setRetention serves PUT {stream}/retention/{offset} and ?record= (extension §2.2).
func (h *Handler) setRetention(w http.ResponseWriter, r *http.Request, t target) error {
	at, err := position(r, t)
	if err != nil {
		return err
	}
	info, err := h.store.SetRetention(t.key, at)
	if err != nil {
		return err
	}
	hd := w.Header()
	hd.Set(hNextOffset, info.Tail.String())
	if info.JSON() {
		setRecordBounds(hd, info)
	}
	hd.Set("Cache-Control", ccNoStore)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// setRecordBounds sets Stream-Extensions, Stream-Record-First and Stream-Record-Next
// (extension §6.5, §6.10).
func setRecordBounds(hd http.Header, info engine.StreamInfo) {
	hd.Set(hExtensions, extRecords)
	hd.Set(hRecordFirst, strconv.FormatUint(info.RecordFirst, 10))
	hd.Set(hRecordNext, strconv.FormatUint(info.RecordNext, 10))
}
