package httpd

import "net/http"

// ReadAccess reports which buckets r's bearer token may read: every bucket without tokens
// configured or with an admin token, else those of its read: scopes (D12). ok is false
// when tokens are configured and r carries no valid one (the caller answers 401). The
// admin listener's bucket listing filters by it.
func (h *Handler) ReadAccess(r *http.Request) (canRead func(bucket string) bool, ok bool) {
	ts := h.tokens.Load()
	if ts == nil {
		return func(string) bool { return true }, true
	}
	e := ts.lookup(r)
	if e == nil {
		return nil, false
	}
	return func(bucket string) bool { return e.grants(scope{bucket: bucket}) }, true
}
