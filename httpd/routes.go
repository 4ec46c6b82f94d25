package httpd

import "net/http"

// route is the route table: resource kind x method -> handler; nil means 405.
func (h *Handler) route(t target, method string) handlerFunc {
	switch t.kind {
	case tReserved:
		return h.reserved
	case tBucket:
		return pick(method, map[string]handlerFunc{
			http.MethodPut: h.putBucket, http.MethodGet: h.getBucket,
			http.MethodHead: h.getBucket, http.MethodDelete: h.deleteBucket})
	case tBucketList:
		return pick(method, map[string]handlerFunc{
			http.MethodGet: h.listStreams, http.MethodHead: h.listStreams})
	case tStream:
		switch method {
		case http.MethodPost:
			return h.streamFn.append
		case http.MethodGet:
			return h.streamFn.read
		case http.MethodHead:
			return h.streamFn.head
		case http.MethodPut:
			return h.streamFn.create
		case http.MethodDelete:
			return h.streamFn.delete
		}
		return nil
	}
	return h.extensionRoute(t, method)
}

// streamRoutes are the handlers of a stream's methods.
type streamRoutes struct{ append, read, head, create, delete handlerFunc }

func pick(method string, m map[string]handlerFunc) handlerFunc { return m[method] }

// allowed lists the methods of a resource kind for 405 responses.
func allowed(k targetKind) string {
	switch k {
	case tBucket:
		return "GET, HEAD, PUT, DELETE"
	case tBucketList, tBootstrap:
		return "GET, HEAD"
	case tStream:
		return "GET, HEAD, PUT, POST, DELETE"
	case tSnapshot:
		return "GET, HEAD, PUT"
	case tSnapshotAt:
		return "GET, HEAD, PUT, DELETE"
	case tRetention:
		return "PUT"
	case tAttrs:
		return "GET, HEAD, PUT"
	case tAppendBatch:
		return "POST"
	}
	return ""
}
