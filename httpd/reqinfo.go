package httpd

import "net/http"

// RequestInfo is what the handler learned about one request, for the request log and the
// metrics of the operator surface (D12). A middleware creates it and passes it in the
// ResponseWriter it passes on (a RequestInfoWriter, found through Unwrap); the handler
// fills it in as it goes. It is written by the request's own goroutine only, and read
// after the handler returned.
type RequestInfo struct {
	// Route names the resource kind: "stream", "bucket", "streams", "snapshot",
	// "snapshot_at", "retention", "bootstrap", "attrs", "append_batch", "reserved";
	// "" when the path named no resource.
	Route string
	// Code is the D7 error code of an error response ("" on success).
	Code string
	// BodyBytes counts the request body bytes the handler read, after Content-Encoding
	// decoding.
	BodyBytes int64
}

// RequestInfoWriter is a middleware's ResponseWriter that carries the request's
// RequestInfo (in the writer, not the request context: a context would cost the
// middleware a copy of each request, r.WithContext).
type RequestInfoWriter interface {
	http.ResponseWriter
	RequestInfo() *RequestInfo
}

// requestInfo returns the RequestInfo of w (or of a writer it wraps, Unwrap), or nil when
// no middleware asked for one.
func requestInfo(w http.ResponseWriter) *RequestInfo {
	for w != nil {
		if c, ok := w.(RequestInfoWriter); ok {
			return c.RequestInfo()
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			break
		}
		w = u.Unwrap()
	}
	return nil
}

// routeNames are the RequestInfo.Route values by resource kind.
var routeNames = [...]string{
	tBucket: "bucket", tBucketList: "streams", tStream: "stream", tSnapshot: "snapshot",
	tSnapshotAt: "snapshot_at", tRetention: "retention", tBootstrap: "bootstrap",
	tAttrs: "attrs", tAppendBatch: "append_batch", tReserved: "reserved",
}

// noteRoute records the resource kind of a parsed request.
func noteRoute(w http.ResponseWriter, k targetKind) {
	if ri := requestInfo(w); ri != nil && int(k) < len(routeNames) {
		ri.Route = routeNames[k]
	}
}

// noteCode records the error code of an error response.
func noteCode(w http.ResponseWriter, code string) {
	if ri := requestInfo(w); ri != nil {
		ri.Code = code
	}
}
