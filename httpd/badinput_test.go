package httpd

import (
	"encoding/json"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// Bad input gets a 4xx with the JSON error body of D7 and changes nothing: after every
// rejected request the stream still holds exactly "seed" with the same tail.
// Spec: D7, A-07 step 1, A-11, A-15, B-5.1-04, B-5.1-06, B-5.2.1-01, B-5.2.1-02,
// B-5.6-08, B-5.7-01, B-9.1-03, extension §1.1, §5.1; INVALID_QUERY and REPEATED_HEADER
// as CONFORMANCE.md's "Request syntax" decides.
func TestBadInputIsRejectedAndChangesNothing(t *testing.T) {
	s := newTestServer(t)
	s.do("PUT", "/v1/stream/s", "seed", "Content-Type: text/plain")
	s.do("PUT", "/v1/stream/j", `{"a":1}`, "Content-Type: application/json")
	cases := []struct {
		name, method, path, body string
		hdr                      []string
		status                   int
		code                     string
	}{
		{"ttl with sign", "PUT", "/v1/stream/n1", "", []string{"Stream-TTL: +60"}, 400, "INVALID_TTL"},
		{"ttl leading zero", "PUT", "/v1/stream/n1", "", []string{"Stream-TTL: 060"}, 400, "INVALID_TTL"},
		{"ttl exponent", "PUT", "/v1/stream/n1", "", []string{"Stream-TTL: 1e3"}, 400, "INVALID_TTL"},
		{"ttl and expiry", "PUT", "/v1/stream/n1", "", []string{"Stream-TTL: 60", "Stream-Expires-At: 2099-01-01T00:00:00Z"}, 400, "TTL_AND_EXPIRES_AT"},
		{"bad expiry", "PUT", "/v1/stream/n1", "", []string{"Stream-Expires-At: tomorrow"}, 400, "INVALID_EXPIRES_AT"},
		{"past expiry", "PUT", "/v1/stream/n1", "", []string{"Stream-Expires-At: 2001-01-01T00:00:00Z"}, 400, "INVALID_EXPIRES_AT"},
		{"bad content type", "PUT", "/v1/stream/n1", "", []string{"Content-Type: text"}, 400, "INVALID_CONTENT_TYPE"},
		{"invalid json create", "PUT", "/v1/stream/n1", "{", []string{"Content-Type: application/json"}, 400, "INVALID_JSON"},
		{"bad attrs", "PUT", "/v1/stream/n1", "", []string{`Stream-Attrs: {"title":5}`}, 400, "INVALID_ATTRS"},
		{"attrs trailing bracket", "PUT", "/v1/stream/n1", "", []string{`Stream-Attrs: {"title":"z"}]`}, 400, "INVALID_ATTRS"},
		{"sub-offset alone", "PUT", "/v1/stream/n1", "", []string{"Stream-Fork-Sub-Offset: 0"}, 400, "INVALID_FORK"},
		{"fork offset sentinel", "PUT", "/v1/stream/n1", "", []string{"Stream-Forked-From: /v1/stream/s", "Stream-Fork-Offset: now"}, 400, "INVALID_FORK"},
		{"fork from url", "PUT", "/v1/stream/n1", "", []string{"Stream-Forked-From: http://x/v1/stream/s"}, 400, "INVALID_FORK"},
		{"empty append", "POST", "/v1/stream/s", "", []string{"Content-Type: text/plain"}, 400, "EMPTY_BODY"},
		{"no content type", "POST", "/v1/stream/s", "x", nil, 400, "MISSING_CONTENT_TYPE"},
		{"partial producer", "POST", "/v1/stream/s", "x", []string{"Content-Type: text/plain", "Producer-Id: p", "Producer-Epoch: 0"}, 400, "INVALID_PRODUCER"},
		{"producer seq not int", "POST", "/v1/stream/s", "x", []string{"Content-Type: text/plain", "Producer-Id: p", "Producer-Epoch: 0", "Producer-Seq: 1e3"}, 400, "INVALID_PRODUCER"},
		{"producer epoch too big", "POST", "/v1/stream/s", "x", []string{"Content-Type: text/plain", "Producer-Id: p", "Producer-Epoch: 9007199254740992", "Producer-Seq: 0"}, 400, "INVALID_PRODUCER"},
		{"empty producer id", "POST", "/v1/stream/s", "x", []string{"Content-Type: text/plain", "Producer-Id: ", "Producer-Epoch: 0", "Producer-Seq: 0"}, 400, "INVALID_PRODUCER"},
		{"empty stream seq", "POST", "/v1/stream/s", "x", []string{"Content-Type: text/plain", "Stream-Seq: "}, 400, "INVALID_STREAM_SEQ"},
		{"invalid json append", "POST", "/v1/stream/j", "[1,", []string{"Content-Type: application/json"}, 400, "INVALID_JSON"},
		{"empty json array", "POST", "/v1/stream/j", "[]", []string{"Content-Type: application/json"}, 400, "EMPTY_JSON_ARRAY"},
		{"invalid utf8 json", "POST", "/v1/stream/j", "\"\xff\"", []string{"Content-Type: application/json"}, 400, "INVALID_JSON"},
		{"too large", "POST", "/v1/stream/s", strings.Repeat("x", 1<<20+1), []string{"Content-Type: text/plain"}, 413, "PAYLOAD_TOO_LARGE"},
		{"malformed offset", "GET", "/v1/stream/s?offset=abc", "", nil, 400, "INVALID_OFFSET"},
		{"empty offset", "GET", "/v1/stream/s?offset=", "", nil, 400, "INVALID_OFFSET"},
		{"two offsets", "GET", "/v1/stream/s?offset=-1&offset=now", "", nil, 400, "INVALID_OFFSET"},
		{"offset beyond tail", "GET", "/v1/stream/s?offset=9999999999999999_9999999999999999", "", nil, 400, "OFFSET_BEYOND_TAIL"},
		{"offset mid message", "GET", "/v1/stream/s?offset=0000000000000000_0000000000000002", "", nil, 400, "OFFSET_NOT_ALIGNED"},
		{"live without offset", "GET", "/v1/stream/s?live=sse", "", nil, 400, "OFFSET_REQUIRED"},
		{"unknown live", "GET", "/v1/stream/s?offset=-1&live=poll", "", nil, 400, "INVALID_LIVE_MODE"},
		{"bad bucket id", "PUT", "/AB", "", nil, 400, "INVALID_BUCKET_ID"},
		{"reserved bucket id", "PUT", "/__ds", "", nil, 400, "INVALID_BUCKET_ID"},
		{"stream id with dotdot", "PUT", "/default/a..b", "", nil, 400, "INVALID_STREAM_ID"},
		{"stream id dot", "PUT", "/default/.", "", nil, 400, "INVALID_STREAM_ID"},
		{"stream id escaped dot", "PUT", "/default/%2E", "", nil, 400, "INVALID_STREAM_ID"},
		{"stream id dotdot", "PUT", "/default/..", "", nil, 400, "INVALID_STREAM_ID"},
		{"stream id too long", "PUT", "/default/" + strings.Repeat("x", 120), "", nil, 400, "INVALID_STREAM_ID"},
		{"stream id with escaped slash", "PUT", "/default/a%2Fb", "", nil, 400, "INVALID_STREAM_ID"},
		{"flat name with empty segment", "PUT", "/v1/stream/a//b", "", nil, 400, "INVALID_STREAM_ID"},
		{"flat name with trailing slash", "PUT", "/v1/stream/a/", "", nil, 400, "INVALID_STREAM_ID"},
		{"flat name with dot segment", "PUT", "/v1/stream/a/./b", "", nil, 400, "INVALID_STREAM_ID"},
		{"flat name with dotdot segment", "PUT", "/v1/stream/a/%2E%2E/b", "", nil, 400, "INVALID_STREAM_ID"},
		{"flat name with escaped slash", "PUT", "/v1/stream/a%2Fb", "", nil, 400, "INVALID_STREAM_ID"},
		{"flat name with NUL", "PUT", "/v1/stream/a%00b", "", nil, 400, "INVALID_STREAM_ID"},
		{"flat name too long", "PUT", "/v1/stream/" + strings.Repeat("x/", 512) + "x", "", nil, 400, "INVALID_STREAM_ID"},
		{"reserved streams id", "PUT", "/v1/stream/streams", "", nil, 400, "INVALID_STREAM_ID"},
		{"list limit", "GET", "/default/streams?limit=0", "", nil, 400, "INVALID_QUERY"},
		{"too many json messages", "POST", "/v1/stream/j", "[" + strings.Repeat("0,", 100_000) + "0]", []string{"Content-Type: application/json"}, 413, "TOO_MANY_MESSAGES"},
		{"delete compat bucket", "DELETE", "/default", "", nil, 409, "BUCKET_RESERVED"},
		{"query bad escape", "GET", "/v1/stream/s?offset=now%zz", "", nil, 400, "INVALID_QUERY"},
		{"query semicolon", "GET", "/v1/stream/s?offset=0000000000000000_0000000000000004;", "", nil, 400, "INVALID_QUERY"},
		{"live bad escape", "GET", "/v1/stream/s?offset=now&live=sse%", "", nil, 400, "INVALID_QUERY"},
		{"append bad query", "POST", "/v1/stream/s?x=%zz", "x", []string{"Content-Type: text/plain"}, 400, "INVALID_QUERY"},
		{"create bad query", "PUT", "/v1/stream/n1?a=b;c", "", nil, 400, "INVALID_QUERY"},
		{"repeated ttl", "PUT", "/v1/stream/n1", "", []string{"Stream-TTL: 60", "Stream-TTL: 120"}, 400, "REPEATED_HEADER"},
		{"repeated content type", "POST", "/v1/stream/s", "x", []string{"Content-Type: text/plain", "Content-Type: text/plain"}, 400, "REPEATED_HEADER"},
		{"repeated producer id", "POST", "/v1/stream/s", "x", []string{"Content-Type: text/plain", "Producer-Id: a", "Producer-Id: b", "Producer-Epoch: 0", "Producer-Seq: 0"}, 400, "REPEATED_HEADER"},
		{"repeated producer seq", "POST", "/v1/stream/s", "x", []string{"Content-Type: text/plain", "Producer-Id: a", "Producer-Epoch: 0", "Producer-Seq: 0", "Producer-Seq: 5"}, 400, "REPEATED_HEADER"},
		{"repeated stream seq", "POST", "/v1/stream/s", "x", []string{"Content-Type: text/plain", "Stream-Seq: a", "Stream-Seq: b"}, 400, "REPEATED_HEADER"},
		{"repeated closed", "POST", "/v1/stream/s", "", []string{"Stream-Closed: true", "Stream-Closed: false"}, 400, "REPEATED_HEADER"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := s.do(c.method, c.path, c.body, c.hdr...)
			if status(w) != c.status {
				t.Fatalf("status %d, want %d: %s", status(w), c.status, w.Body.String())
			}
			if code := errorCode(t, w); code != c.code {
				t.Fatalf("code %s, want %s", code, c.code)
			}
			if r := s.do("GET", "/v1/stream/s", ""); r.Body.String() != "seed" || r.Header().Get("Stream-Next-Offset") != "0000000000000000_0000000000000004" {
				t.Fatalf("stream changed: %q %s", r.Body.String(), r.Header().Get("Stream-Next-Offset"))
			}
			if r := s.do("HEAD", "/v1/stream/n1", ""); status(r) != 404 {
				t.Fatalf("rejected create left a stream: %d", status(r))
			}
		})
	}
}

// Syntax errors name the parameter and its allowed form (issue 18), each with its
// code's usual status. Spec: D7, extension §3, §5.4, §6.6.
func TestErrorMessagesNameTheParameter(t *testing.T) {
	s := newTestServer(t)
	s.do("PUT", "/default/j", `{"a":1}`, "Content-Type: application/json")
	cases := []struct{ method, path, body, hdr, want string }{
		{"GET", "/default/streams?limit=1001", "", "", "limit must be 1..1000"},
		{"GET", "/default/j/bootstrap?live=sse", "", "", "/bootstrap takes no live parameter"},
		{"PUT", "/default/j/attrs", "{}", "Content-Type: text/plain", "attrs need Content-Type: application/json"},
		{"GET", "/default/j?offset=-1&timeout_ms=x", "", "", "timeout_ms must be"},
		{"GET", "/default/j?record=x", "", "", "record must be now or an unsigned decimal integer"},
		{"GET", "/default/j?tail_records=-1", "", "", "tail_records must be"},
		{"GET", "/default/j?record=0&max_records=0", "", "", "max_records must be 1.."},
		{"GET", "/default/j?record=0&record_view=full", "", "", "record_view must be envelope"},
		{"GET", "/default/j?max_records=1", "", "", "max_records and record_view need record= or tail_records="},
		{"GET", "/default/j?offset=now&cur%zzsor=1", "", "", `query parameter "cur%zzsor" is malformed`},
		{"GET", "/default/j?offset=now&live=sse%", "", "", `query parameter "live" is malformed`},
		{"GET", "/default/j?offset=0000000000000000_0000000000000004;", "", "", `query parameter "offset" is malformed`},
	}
	for _, c := range cases {
		var hdr []string
		if c.hdr != "" {
			hdr = []string{c.hdr}
		}
		w := s.do(c.method, c.path, c.body, hdr...)
		errorCode(t, w)
		var body errorBody
		_ = json.Unmarshal(w.Body.Bytes(), &body)
		if status(w) != 400 || !strings.Contains(body.Error.Message, c.want) {
			t.Errorf("%s %s: %d %s, want 400 naming %q", c.method, c.path, status(w), w.Body.String(), c.want)
		}
	}
}

// HEAD errors carry a status and no body. Spec: A-24, D7.
func TestHeadErrorHasNoBody(t *testing.T) {
	s := newTestServer(t)
	w := s.do("HEAD", "/v1/stream/missing", "")
	if status(w) != 404 || w.Body.Len() != 0 {
		t.Fatalf("%d %q", status(w), w.Body.String())
	}
}

// Every response carries nosniff and CORP, errors included. Spec: B-12.7-01, D7.
func TestSecurityHeadersEverywhere(t *testing.T) {
	s := newTestServer(t)
	for _, w := range []*httptest.ResponseRecorder{s.do("GET", "/v1/stream/missing", ""), s.do("PUT", "/v1/stream/ok", ""), s.do("OPTIONS", "/v1/stream/ok", "")} {
		h := w.Header()
		if h["X-Content-Type-Options"][0] != "nosniff" || h["Cross-Origin-Resource-Policy"][0] != "cross-origin" {
			t.Fatalf("headers %v", h)
		}
	}
}

// Unknown methods get 405 with Allow; __ds is reserved and never creates a stream.
// Spec, D1.
func TestMethodAndReservedPaths(t *testing.T) {
	s := newTestServer(t)
	if w := s.do("PATCH", "/v1/stream/x", ""); status(w) != 405 || w.Header().Get("Allow") == "" {
		t.Fatalf("PATCH: %d %v", status(w), w.Header())
	}
	for _, p := range []string{"/v1/stream/__ds", "/__ds/subscriptions/x", "/default/__ds"} {
		if w := s.do("PUT", p, ""); status(w) != 501 || errorCode(t, w) != "NOT_IMPLEMENTED" {
			t.Fatalf("PUT %s: %d %s", p, status(w), w.Body.String())
		}
	}
}

// Once retention has advanced, a read from -1 is 410 in every read mode, naming the
// earliest retained offset in Stream-Next-Offset; so an ETag of the untrimmed read never
// validates again. Offsets at or after the retained start and now are served.
// Spec: D2 amendment, extension §2.2, §3.4.
func TestMinusOneIsGoneAfterRetention(t *testing.T) {
	s := newTestServer(t)
	s.do("PUT", "/v1/stream/e", "aaaa", "Content-Type: text/plain")
	s.do("POST", "/v1/stream/e", "bbbb", "Content-Type: text/plain")
	before := s.do("GET", "/v1/stream/e?offset=-1", "").Header().Get("ETag")
	s.do("PUT", "/default/e/snapshot/0000000000000000_0000000000000004", "S")
	if r := s.do("PUT", "/default/e/retention/0000000000000000_0000000000000004", ""); status(r) != 204 {
		t.Fatalf("retention: %d %s", status(r), r.Body.String())
	}
	const start = "0000000000000000_0000000000000004"
	for _, q := range []string{"offset=-1", "", "offset=-1&live=long-poll", "offset=-1&live=sse", "offset=0000000000000000_0000000000000000"} {
		r := s.do("GET", "/v1/stream/e?"+q, "", "If-None-Match: "+before)
		if status(r) != 410 || errorCode(t, r) != "OFFSET_GONE" || r.Header().Get("Stream-Next-Offset") != start {
			t.Errorf("%q after retention: %d %s Stream-Next-Offset %q, want 410 naming %s", q, status(r), r.Body.String(), r.Header().Get("Stream-Next-Offset"), start)
		}
	}
	if r := s.do("GET", "/v1/stream/e?offset="+start, ""); status(r) != 200 || r.Body.String() != "bbbb" {
		t.Fatalf("read from the retained start: %d %q", status(r), r.Body.String())
	}
	if r := s.do("GET", "/v1/stream/e?offset=now", ""); status(r) != 200 {
		t.Fatalf("now after retention: %d", status(r))
	}
}

// With bearer tokens configured, cacheable reads are private and vary on Authorization,
// so a shared cache never serves a protected read to another client; the scheme is
// case-insensitive. Spec: B-10-01, B-12-01, A-04 (the private option), RFC 9110 §11.1.
func TestAuthMakesReadsPrivate(t *testing.T) {
	s := newTestServerWith(t, Config{AuthTokens: []string{"tok1"}})
	auth := "Authorization: bearer tok1" // lower-case scheme
	if w := s.do("PUT", "/v1/stream/p", "secret", "Content-Type: text/plain", auth); status(w) != 201 {
		t.Fatalf("create with a lower-case bearer scheme: %d %s", status(w), w.Body.String())
	}
	w := s.do("GET", "/v1/stream/p?offset=-1", "", auth)
	if cc := w.Header().Get("Cache-Control"); status(w) != 200 || !strings.HasPrefix(cc, "private, ") {
		t.Fatalf("protected read: %d Cache-Control %q, want private", status(w), cc)
	}
	if v := w.Header().Values("Vary"); !slices.Contains(v, "Authorization") {
		t.Fatalf("protected read: Vary %q lacks Authorization", v)
	}
	if w := s.do("GET", "/v1/stream/p?offset=-1", "", "Authorization: Bearer tok1", "Authorization: Bearer other"); status(w) != 400 {
		t.Fatalf("two Authorization headers: %d, want 400", status(w))
	}
	if w := s.do("GET", "/v1/stream/p?offset=-1", "", "Authorization: Basic tok1"); status(w) != 401 {
		t.Fatalf("another scheme with a listed token: %d, want 401", status(w))
	}
}

// Without tokens or --cache-private, reads stay publicly cacheable.
func TestReadsArePublicByDefault(t *testing.T) {
	s := newTestServer(t)
	s.do("PUT", "/v1/stream/p", "x", "Content-Type: text/plain")
	w := s.do("GET", "/v1/stream/p?offset=-1", "")
	if cc := w.Header().Get("Cache-Control"); !strings.HasPrefix(cc, "public, ") || strings.Contains(w.Header().Get("Vary"), "Authorization") {
		t.Fatalf("Cache-Control %q, Vary %q", cc, w.Header().Get("Vary"))
	}
}

// Snapshot and retention paths take an offset token only: their error does not offer the
// read sentinels -1 and now. Spec: extension §2.5, §3.
func TestOffsetTokenPaths(t *testing.T) {
	s := newTestServer(t)
	s.do("PUT", "/v1/stream/ret", "x", "Content-Type: text/plain")
	for _, p := range []string{"/default/ret/retention/-1", "/default/ret/retention/now", "/default/ret/snapshot/-1"} {
		if w := s.do("PUT", p, "", "Content-Type: text/plain"); status(w) != 400 || errorCode(t, w) != "INVALID_OFFSET" ||
			strings.Contains(w.Body.String(), "must be -1") {
			t.Errorf("PUT %s: %d %s, want 400 INVALID_OFFSET not offering -1 or now", p, status(w), w.Body)
		}
	}
}
