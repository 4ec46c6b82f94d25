package httpd

import (
	"net/http"
	"strconv"

	"github.com/dsd-project/dsd/model"
)

// getAttrs serves GET {stream}/attrs: the attribute object, {} when none (extension §5.3).
func (h *Handler) getAttrs(w http.ResponseWriter, r *http.Request, t target) error {
	attrs, err := h.store.Attrs(t.key)
	if err != nil {
		return err
	}
	if attrs == nil {
		attrs = []byte("{}")
	}
	hd := w.Header()
	hd.Set(hContentType, "application/json")
	hd.Set("Cache-Control", ccNoStore)
	hd.Set("Content-Length", strconv.Itoa(len(attrs)))
	h.advertise(hd, t)
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(attrs)
	}
	return nil
}

// putAttrs serves PUT {stream}/attrs: replaces the attribute object; 204 (extension §5.4).
func (h *Handler) putAttrs(w http.ResponseWriter, r *http.Request, t target) error {
	ct := r.Header.Get(hContentType)
	if ct == "" {
		return model.ErrMissingContentType
	}
	if mt, err := model.MediaType(ct); err != nil || !model.IsJSON(mt) {
		return model.ErrAttrsContentType
	}
	body, done, err := h.readBody(w, r, model.MaxAttrsBytes*4, nil) // attributes are judged before the stream (model)
	defer done()
	if err != nil {
		return err
	}
	attrs, err := model.NormalizeAttrs(body)
	if err != nil {
		return err
	}
	if err := h.store.SetAttrs(t.key, attrs); err != nil {
		return err
	}
	w.Header().Set("Cache-Control", ccNoStore)
	h.advertise(w.Header(), t)
	w.WriteHeader(http.StatusNoContent)
	return nil
}
