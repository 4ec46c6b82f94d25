package httpd

import "net/http"

// extensionRoute routes the extension sub-resources of a stream (D1, extension §2-§5).
func (h *Handler) extensionRoute(t target, method string) handlerFunc {
	switch t.kind {
	case tSnapshot:
		switch method {
		case http.MethodGet, http.MethodHead:
			return h.latestSnapshot
		case http.MethodPut:
			return h.publishSnapshot
		}
	case tSnapshotAt:
		switch method {
		case http.MethodGet, http.MethodHead:
			return h.readSnapshot
		case http.MethodPut:
			return h.publishSnapshot
		case http.MethodDelete:
			return h.deleteSnapshot
		}
	case tRetention:
		if method == http.MethodPut {
			return h.setRetention
		}
	case tBootstrap:
		if method == http.MethodGet || method == http.MethodHead {
			return h.bootstrap
		}
	case tAttrs:
		switch method {
		case http.MethodGet, http.MethodHead:
			return h.getAttrs
		case http.MethodPut:
			return h.putAttrs
		}
	case tAppendBatch:
		if method == http.MethodPost {
			return h.appendBatch
		}
	}
	return nil
}
