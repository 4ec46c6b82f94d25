package httpd

import (
	"bufio"
	"context"
	"crypto/subtle"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/dsd-project/dsd/model"
)

// Tokens is a set of bearer tokens and their scopes (B-12-01, D12). Parse it with
// ParseTokens; it is immutable, so a reload swaps the whole set (Handler.SetTokens).
type Tokens struct{ entries []tokenEntry }

// tokenEntry is one token and what it grants. A token listed without scopes grants
// everything (admin).
type tokenEntry struct {
	token       []byte
	admin       bool
	read, write map[string]bool // bucket ids; "*" is every bucket
}

// ParseTokens reads lines "TOKEN [SCOPE ...]"; blank lines and # comments are skipped. A
// scope is "read:BUCKET", "write:BUCKET" (BUCKET a bucket id or "*" for every bucket) or
// "admin" (everything, bucket creation and deletion included); a token without scopes
// grants everything. Errors name the line: a bad scope, a repeated token, no token at all.
func ParseTokens(r io.Reader) (*Tokens, error) {
	var ts Tokens
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if seen[f[0]] {
			return nil, fmt.Errorf("line %d: token listed twice", n)
		}
		seen[f[0]] = true
		e := tokenEntry{token: []byte(f[0]), admin: len(f) == 1, read: map[string]bool{}, write: map[string]bool{}}
		for _, s := range f[1:] {
			if err := e.addScope(s); err != nil {
				return nil, fmt.Errorf("line %d: %w", n, err)
			}
		}
		ts.entries = append(ts.entries, e)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(ts.entries) == 0 {
		return nil, fmt.Errorf("no token listed")
	}
	return &ts, nil
}

// TokensOf grants each of tokens everything (the Config.AuthTokens form).
func TokensOf(tokens []string) *Tokens {
	ts := &Tokens{}
	for _, t := range tokens {
		ts.entries = append(ts.entries, tokenEntry{token: []byte(t), admin: true})
	}
	return ts
}

func (e *tokenEntry) addScope(s string) error {
	if s == "admin" {
		e.admin = true
		return nil
	}
	kind, bucket, ok := strings.Cut(s, ":")
	if !ok || (kind != "read" && kind != "write") || (bucket != "*" && !model.ValidBucketID(bucket)) {
		return fmt.Errorf("scope %q: want read:BUCKET, write:BUCKET (BUCKET a bucket id or *) or admin", s)
	}
	if kind == "read" {
		e.read[bucket] = true
	} else {
		e.write[bucket] = true
	}
	return nil
}

// scope is what one request needs.
type scope struct {
	write  bool
	admin  bool
	bucket string
}

func (s scope) String() string {
	switch {
	case s.admin:
		return "admin"
	case s.write:
		return "write:" + s.bucket
	}
	return "read:" + s.bucket
}

// grants reports whether e allows s.
func (e *tokenEntry) grants(s scope) bool {
	switch {
	case e.admin:
		return true
	case s.admin:
		return false
	case s.write:
		return e.write["*"] || e.write[s.bucket]
	}
	return e.read["*"] || e.read[s.bucket]
}

// scopeFor maps a request to the scope it needs: reads (GET, HEAD) need read:BUCKET,
// other methods write:BUCKET, creating or deleting a bucket (PUT, DELETE /{bucket}) and
// anything outside a bucket need admin. The flat surface's bucket is --compat-bucket.
func scopeFor(t target, method string) scope {
	read := method == http.MethodGet || method == http.MethodHead
	switch {
	case t.bucket == "":
		return scope{admin: true}
	case t.kind == tBucket && !read:
		return scope{admin: true}
	}
	return scope{write: !read, bucket: t.bucket}
}

// lookup returns the entry of the request's bearer token, or nil. Every entry is compared,
// each in constant time.
func (ts *Tokens) lookup(r *http.Request) *tokenEntry {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") { // schemes are case-insensitive (RFC 9110 §11.1)
		return nil
	}
	b := []byte(strings.TrimSpace(tok))
	var found *tokenEntry
	for i := range ts.entries {
		if subtle.ConstantTimeCompare(ts.entries[i].token, b) == 1 {
			found = &ts.entries[i]
		}
	}
	return found
}

type tokenKey struct{}

// authenticate returns r carrying its token's entry, or model.ErrUnauthorized. Without
// tokens configured every request passes, and so do the subscription requests that
// authenticate themselves (ownToken); admit then checks no scope for them.
func (h *Handler) authenticate(r *http.Request) (*http.Request, error) {
	ts := h.tokens.Load()
	if ts == nil || r.Method == http.MethodOptions {
		return r, nil
	}
	e := ts.lookup(r)
	if e == nil {
		if h.ownToken(r) {
			return r, nil // subscription callbacks carry their own token (base §7)
		}
		return r, model.ErrUnauthorized
	}
	return r.WithContext(context.WithValue(r.Context(), tokenKey{}, e)), nil
}

// admit notes the request's route (for logs and metrics) and checks its token against
// the scope t needs (403 FORBIDDEN).
func admit(w http.ResponseWriter, r *http.Request, t target) error {
	noteRoute(w, t.kind)
	e, _ := r.Context().Value(tokenKey{}).(*tokenEntry)
	if e == nil {
		return nil // no tokens configured, or a request with its own token (authenticate)
	}
	if s := scopeFor(t, r.Method); !e.grants(s) {
		return fmt.Errorf("%w: this request needs %s", model.ErrForbidden, s)
	}
	return nil
}

// SetTokens replaces the token set (a reload, e.g. on SIGHUP); requests in flight and live
// reads already admitted continue. nil turns authentication off only when the handler was
// built without tokens.
func (h *Handler) SetTokens(ts *Tokens) {
	if ts != nil {
		h.tokens.Store(ts)
	}
}

// AdminAuthorized reports whether r may use the admin listener's data endpoints (/backup,
// /debug/pprof/): always without tokens, else with a token holding the admin scope.
func (h *Handler) AdminAuthorized(r *http.Request) bool {
	ts := h.tokens.Load()
	if ts == nil {
		return true
	}
	e := ts.lookup(r)
	return e != nil && e.admin
}
