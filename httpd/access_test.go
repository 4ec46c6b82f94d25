package httpd

import (
	"net/http/httptest"
	"testing"
)

// ReadAccess follows the token's read scopes; admin reads everything; no token is refused
// only when tokens are configured.
func TestReadAccess(t *testing.T) {
	open := newTestServerWith(t, Config{})
	if can, ok := open.h.ReadAccess(httptest.NewRequest("GET", "/", nil)); !ok || !can("any") {
		t.Fatal("without tokens every bucket is readable")
	}
	s := newTestServerWith(t, Config{Tokens: mustTokens(t, "root\nreader read:bkt-a write:bkt-b\n")})
	req := func(tok string) (func(string) bool, bool) {
		r := httptest.NewRequest("GET", "/", nil)
		if tok != "" {
			r.Header.Set("Authorization", "Bearer "+tok)
		}
		return s.h.ReadAccess(r)
	}
	if _, ok := req(""); ok {
		t.Fatal("no token admitted")
	}
	if _, ok := req("wrong"); ok {
		t.Fatal("unknown token admitted")
	}
	if can, ok := req("reader"); !ok || !can("bkt-a") || can("bkt-b") {
		t.Fatal("reader: read:bkt-a only")
	}
	if can, ok := req("root"); !ok || !can("bkt-b") {
		t.Fatal("admin token reads everything")
	}
}
