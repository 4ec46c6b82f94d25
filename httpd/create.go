package httpd

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/model"
)

// create serves PUT {stream} (B-5.1; forks B-4.2; attributes extension §5.2).
func (h *Handler) create(w http.ResponseWriter, r *http.Request, t target) error {
	req, err := h.parseCreate(r, t)
	if err != nil {
		return err
	}
	var done func()
	req.Body, done, err = h.readBody(w, r, h.cfg.MaxBody, nil)
	defer done()
	if err != nil {
		return err
	}
	res, err := h.store.Create(t.key, req)
	if err != nil {
		return err
	}
	hd := w.Header()
	hd.Set(hContentType, res.Info.ContentType)
	hd.Set(hNextOffset, res.Info.Tail.String())
	hd.Set("Cache-Control", ccNoStore)
	if res.Info.Closed {
		hd.Set(hStreamClosed, "true")
	}
	if res.Info.JSON() {
		setRecordAck(hd, res.RecordStart, res.RecordNext)
	}
	status := http.StatusOK
	if res.Created {
		status = http.StatusCreated
		hd.Set("Location", absoluteURL(r, t.path))
	}
	w.WriteHeader(status)
	return nil
}

// parseCreate reads the create headers (B-5.1-03..10, A-10..13, A-23).
func (h *Handler) parseCreate(r *http.Request, t target) (engine.CreateRequest, error) {
	var req engine.CreateRequest
	hd := r.Header
	if ct := hd.Get(hContentType); ct != "" {
		mt, err := model.MediaType(ct)
		if err != nil {
			return req, err
		}
		req.ContentType, req.MediaType = ct, mt
	}
	ttl, hasTTL := hd[hTTL]
	exp, hasExp := hd[hExpiresAt]
	if hasTTL && hasExp {
		return req, model.ErrTTLAndExpiresAt
	}
	if hasTTL {
		v, err := model.ParseTTL(ttl[0])
		if err != nil {
			return req, err
		}
		req.TTL = &v
	}
	if hasExp {
		v, err := model.ParseExpiresAt(exp[0], h.now())
		if err != nil {
			return req, err
		}
		req.ExpiresAt = &v
	}
	req.Closed = model.StreamClosedHeader(hd.Get(hStreamClosed))
	if a, ok := hd[hAttrs]; ok {
		attrs, err := model.NormalizeAttrs([]byte(a[0]))
		if err != nil {
			return req, err
		}
		req.Attrs = attrs
	}
	fork, err := h.parseFork(r, t)
	req.Fork = fork
	return req, err
}

// parseFork reads Stream-Forked-From, Stream-Fork-Offset and Stream-Fork-Sub-Offset
// (B-4.2-01..03, B-4.2-13, A-23).
func (h *Handler) parseFork(r *http.Request, t target) (*engine.ForkRequest, error) {
	hd := r.Header
	from, hasFrom := hd[hForkedFrom]
	off, hasOff := hd[hForkOffset]
	sub, hasSub := hd[hForkSubOffset]
	if !hasFrom {
		if hasOff || hasSub {
			return nil, model.ErrBadForkRequest
		}
		return nil, nil
	}
	src, err := h.forkSource(from[0], t)
	if err != nil {
		return nil, err
	}
	f := &engine.ForkRequest{Source: src, SourcePath: from[0]}
	if hasOff {
		o, err := model.ParseOffset(strings.TrimSpace(off[0]))
		if err != nil {
			return nil, model.ErrBadForkRequest
		}
		f.Offset = &o
	}
	if hasSub {
		n, err := parseSubOffset(sub[0])
		if err != nil {
			return nil, err
		}
		if n > 0 && !hasOff {
			return nil, model.ErrBadForkRequest
		}
		f.SubOffset = n
	}
	return f, nil
}

// forkSource resolves Stream-Forked-From: an absolute path on this server naming a stream
// of the same bucket.
func (h *Handler) forkSource(path string, t target) (model.StreamKey, error) {
	if !strings.HasPrefix(path, "/") || strings.HasPrefix(path, "//") || strings.ContainsAny(path, "?#") {
		return model.StreamKey{}, model.ErrBadForkRequest
	}
	st, err := h.parseTarget(path)
	if err != nil || st.kind != tStream {
		return model.StreamKey{}, model.ErrBadForkRequest
	}
	if st.key.Bucket != t.key.Bucket {
		return model.StreamKey{}, model.ErrBadForkRequest
	}
	return st.key, nil
}

// parseSubOffset parses Stream-Fork-Sub-Offset: ^(0|[1-9][0-9]*)$ (B-4.2-13).
func parseSubOffset(s string) (uint64, error) {
	if s == "" || (len(s) > 1 && s[0] == '0') || len(s) > 16 {
		return 0, model.ErrBadForkRequest
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, model.ErrBadForkRequest
		}
	}
	n, _ := strconv.ParseUint(s, 10, 64)
	return n, nil
}

// setRecordAck sets the record acknowledgement of a JSON create or append (extension
// §6.3).
func setRecordAck(hd http.Header, start, next uint64) {
	hd.Set(hExtensions, extRecords)
	hd.Set(hRecordStart, strconv.FormatUint(start, 10))
	hd.Set(hRecordNext, strconv.FormatUint(next, 10))
}
