package httpd

import (
	"net/http"
	"net/url"

	"github.com/dsd-project/dsd/model"
)

// extensionRoute routes the extension sub-resources (D1).
func (h *Handler) extensionRoute(t target, method string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, t target) error {
		return model.ErrNotImplemented
	}
}

// recordQuery is a parsed record-aware read (extension §6.6).
type recordQuery struct{}

// parseRecordQuery detects record-aware read parameters.
func parseRecordQuery(v url.Values, q readQuery) (recordQuery, bool, error) {
	for _, k := range []string{"record", "tail_records", "max_records", "record_view"} {
		if _, ok := v[k]; ok {
			return recordQuery{}, true, nil
		}
	}
	return recordQuery{}, false, nil
}

func (h *Handler) recordRead(w http.ResponseWriter, r *http.Request, t target, q readQuery, rq recordQuery) error {
	return model.ErrNotImplemented
}
