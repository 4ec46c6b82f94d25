package httpd

import (
	"context"
	"io"
	"net/http"
)

// RequestInfo is what the handler learned about one request, for the request log and the
// metrics of the operator surface (D12). A middleware creates it and passes it in the
// request context (WithRequestInfo); the handler fills it in as it goes. It is written by
// the request's own goroutine only, and read after the handler returned.
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

	body countingBody // the request body's counter (countBody): no allocation of its own
}

type reqInfoKey struct{}

// WithRequestInfo returns ctx carrying ri, for Handler.ServeHTTP to fill in.
func WithRequestInfo(ctx context.Context, ri *RequestInfo) context.Context {
	return context.WithValue(ctx, reqInfoKey{}, ri)
}

// requestInfo returns the request's RequestInfo, or nil when no middleware asked for one.
func requestInfo(r *http.Request) *RequestInfo {
	ri, _ := r.Context().Value(reqInfoKey{}).(*RequestInfo)
	return ri
}

// routeNames are the RequestInfo.Route values by resource kind.
var routeNames = [...]string{
	tBucket: "bucket", tBucketList: "streams", tStream: "stream", tSnapshot: "snapshot",
	tSnapshotAt: "snapshot_at", tRetention: "retention", tBootstrap: "bootstrap",
	tAttrs: "attrs", tAppendBatch: "append_batch", tReserved: "reserved",
}

// noteRoute records the resource kind of a parsed request.
func noteRoute(r *http.Request, k targetKind) {
	if ri := requestInfo(r); ri != nil && int(k) < len(routeNames) {
		ri.Route = routeNames[k]
	}
}

// noteCode records the error code of an error response.
func noteCode(r *http.Request, code string) {
	if ri := requestInfo(r); ri != nil {
		ri.Code = code
	}
}

// countingBody counts what is read from a request body into a RequestInfo.
type countingBody struct {
	io.ReadCloser
	ri *RequestInfo
}

func (c *countingBody) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.ri.BodyBytes += int64(n)
	return n, err
}

// countBody makes the request body count its bytes into ri, when there is a body to count.
func countBody(r *http.Request, ri *RequestInfo) {
	if ri != nil && r.Body != nil && r.Body != http.NoBody {
		ri.body = countingBody{ReadCloser: r.Body, ri: ri}
		r.Body = &ri.body
	}
}
