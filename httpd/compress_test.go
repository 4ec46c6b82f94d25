package httpd

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

func gzipped(t *testing.T, data string) string {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(data))
	zw.Close()
	return b.String()
}

// decoded returns a response body decoded by its Content-Encoding.
func decoded(t *testing.T, w *httptest.ResponseRecorder) string {
	t.Helper()
	var rd io.Reader = w.Body
	switch ce := w.Header().Get("Content-Encoding"); ce {
	case "":
	case "gzip":
		zr, err := gzip.NewReader(w.Body)
		if err != nil {
			t.Fatal(err)
		}
		rd = zr
	case "zstd":
		zr, err := zstd.NewReader(w.Body)
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		rd = zr
	default:
		t.Fatalf("Content-Encoding %q", ce)
	}
	b, err := io.ReadAll(rd)
	if err != nil {
		t.Fatalf("decoding %s: %v", w.Header().Get("Content-Encoding"), err)
	}
	return string(b)
}

// A catch-up read of >= 1 KiB is gzip- or zstd-encoded when asked: same bytes, offsets and
// headers as identity, Vary: Accept-Encoding, an ETag per encoding, no Content-Length.
// Spec: D12.
func TestCompressedCatchUp(t *testing.T) {
	s := newTestServer(t)
	data := strings.Repeat("0123456789abcdef", 200)
	s.do("PUT", "/v1/stream/z", data, "Content-Type: text/plain")
	id := s.do("GET", "/v1/stream/z?offset=-1", "")
	if id.Header().Get("Content-Encoding") != "" || id.Body.String() != data {
		t.Fatalf("identity read: %v, %d bytes", id.Header(), id.Body.Len())
	}
	for _, c := range []struct{ accept, coding string }{
		{"gzip", "gzip"}, {"zstd", "zstd"}, {"gzip, deflate, br, zstd", "zstd"},
		{"zstd;q=0.5, gzip", "gzip"}, {"*", "gzip"}, {"br", ""}, {"gzip;q=0", ""},
	} {
		w := s.do("GET", "/v1/stream/z?offset=-1", "", "Accept-Encoding: "+c.accept)
		hd := w.Header()
		if status(w) != 200 || hd.Get("Content-Encoding") != c.coding || decoded(t, w) != data {
			t.Fatalf("%q: %d, Content-Encoding %q, want %q", c.accept, status(w), hd.Get("Content-Encoding"), c.coding)
		}
		if !strings.Contains(hd.Get("Vary"), "Accept-Encoding") {
			t.Errorf("%q: Vary %q", c.accept, hd.Get("Vary"))
		}
		for _, k := range []string{hNextOffset, hUpToDate, "Cache-Control", hContentType} {
			if hd.Get(k) != id.Header().Get(k) {
				t.Errorf("%q: %s %q, identity %q", c.accept, k, hd.Get(k), id.Header().Get(k))
			}
		}
		wantTag := id.Header().Get("ETag")
		if c.coding != "" {
			wantTag = strings.TrimSuffix(wantTag, `"`) + "-" + c.coding + `"`
			if hd.Get("Content-Length") != "" {
				t.Errorf("%q: Content-Length %q on an encoded body", c.accept, hd.Get("Content-Length"))
			}
		}
		if hd.Get("ETag") != wantTag {
			t.Errorf("%q: ETag %q, want %q", c.accept, hd.Get("ETag"), wantTag)
		}
	}
}

// Each encoding's ETag revalidates (304 with that ETag); another encoding's does not.
func TestCompressedETagRevalidation(t *testing.T) {
	s := newTestServer(t)
	s.do("PUT", "/v1/stream/e", strings.Repeat("x", 4000), "Content-Type: text/plain")
	g := s.do("GET", "/v1/stream/e?offset=-1", "", "Accept-Encoding: gzip")
	gtag := g.Header().Get("ETag")
	w := s.do("GET", "/v1/stream/e?offset=-1", "", "Accept-Encoding: gzip", "If-None-Match: "+gtag)
	if status(w) != 304 || w.Header().Get("ETag") != gtag || w.Body.Len() != 0 {
		t.Fatalf("gzip revalidation: %d ETag %q", status(w), w.Header().Get("ETag"))
	}
	if w := s.do("GET", "/v1/stream/e?offset=-1", "", "If-None-Match: "+gtag); status(w) != 200 {
		t.Fatalf("a gzip ETag must not validate the identity body: %d", status(w))
	}
	if w := s.do("GET", "/v1/stream/e?offset=-1", "", "Accept-Encoding: zstd", "If-None-Match: "+gtag); status(w) != 200 || w.Header().Get("Content-Encoding") != "zstd" {
		t.Fatalf("a gzip ETag must not validate the zstd body: %d", status(w))
	}
}

// Bodies under 1 KiB stay identity (with Vary); live reads are never encoded.
func TestCompressionThresholdAndLive(t *testing.T) {
	s := newTestServer(t)
	s.do("PUT", "/v1/stream/small", "tiny", "Content-Type: text/plain")
	w := s.do("GET", "/v1/stream/small?offset=-1", "", "Accept-Encoding: gzip")
	if w.Header().Get("Content-Encoding") != "" || w.Body.String() != "tiny" || w.Header().Get("Content-Length") != "4" ||
		!strings.Contains(w.Header().Get("Vary"), "Accept-Encoding") {
		t.Fatalf("small read: %v %q", w.Header(), w.Body.String())
	}
	s.do("POST", "/v1/stream/small", strings.Repeat("y", 3000), "Content-Type: text/plain")
	w = s.do("GET", "/v1/stream/small?offset=-1&live=long-poll", "", "Accept-Encoding: gzip")
	if status(w) != 200 || w.Header().Get("Content-Encoding") != "" || w.Body.Len() != 3004 {
		t.Fatalf("long-poll: %d %q %d bytes", status(w), w.Header().Get("Content-Encoding"), w.Body.Len())
	}
	// The same live read with its parameter name percent-encoded ("li%76e" is "live").
	w = s.do("GET", "/v1/stream/small?offset=-1&li%76e=long-poll", "", "Accept-Encoding: gzip")
	if status(w) != 200 || w.Header().Get("Content-Encoding") != "" || w.Body.Len() != 3004 {
		t.Fatalf("long-poll, escaped name: %d %q %d bytes", status(w), w.Header().Get("Content-Encoding"), w.Body.Len())
	}
}

// "*" counts as gzip only when gzip is not listed: a refused gzip stays refused (RFC 9110
// §12.5.3).
// Spec: D12.
func TestNegotiateCodingWildcard(t *testing.T) {
	for _, c := range []struct{ accept, want string }{
		{"gzip", "gzip"}, {"zstd", "zstd"}, {"gzip, zstd", "zstd"}, {"gzip;q=1, zstd;q=0.5", "gzip"},
		{"*", "gzip"}, {"gzip;q=0, *", ""}, {"*, gzip;q=0", ""}, {"gzip;q=0, zstd, *", "zstd"},
		{"zstd;q=0, *;q=0.5", "gzip"}, {"*;q=0", ""}, {"identity", ""}, {"gzip;q=0.2, *;q=0.9", "gzip"}, {"zstd;q=0.5, *", "gzip"},
	} {
		if got := negotiateCoding([]string{c.accept}); got != c.want {
			t.Errorf("Accept-Encoding %q: %q, want %q", c.accept, got, c.want)
		}
	}
}

// Listings and bootstraps are encoded when large.
func TestCompressedListingAndBootstrap(t *testing.T) {
	s := newTestServer(t)
	for i := 0; i < 40; i++ {
		s.do("PUT", "/v1/stream/listed-stream-with-a-long-name-"+strings.Repeat("n", i%5)+string(rune('a'+i%26))+string(rune('a'+i/26)), "", "Content-Type: text/plain")
	}
	id := s.do("GET", "/default/streams", "")
	w := s.do("GET", "/default/streams", "", "Accept-Encoding: gzip")
	if id.Body.Len() < minCompressBytes || w.Header().Get("Content-Encoding") != "gzip" || decoded(t, w) != id.Body.String() {
		t.Fatalf("listing: %d identity bytes, Content-Encoding %q", id.Body.Len(), w.Header().Get("Content-Encoding"))
	}
	s.do("PUT", "/v1/stream/boot", strings.Repeat("b", 5000), "Content-Type: text/plain")
	w = s.do("GET", "/default/boot/bootstrap", "", "Accept-Encoding: zstd")
	if status(w) != 200 || w.Header().Get("Content-Encoding") != "zstd" || !strings.Contains(decoded(t, w), strings.Repeat("b", 5000)) {
		t.Fatalf("bootstrap: %d %q", status(w), w.Header().Get("Content-Encoding"))
	}
}

// A gzip request body is decoded before every check: the stored bytes are the decoded
// ones, limits apply to the decoded size (a gzip bomb stops at the limit with 413), a
// corrupt body is 400, another coding is 415; each refusal changes nothing. Spec: D12.
func TestGzipRequestBodies(t *testing.T) {
	s := newTestServer(t) // MaxBody 1 MiB
	if w := s.do("PUT", "/v1/stream/g", gzipped(t, "created "), "Content-Type: text/plain", "Content-Encoding: gzip"); status(w) != 201 {
		t.Fatalf("gzip PUT: %d %s", status(w), w.Body)
	}
	if w := s.do("POST", "/v1/stream/g", gzipped(t, "appended"), "Content-Type: text/plain", "Content-Encoding: gzip"); status(w) != 204 {
		t.Fatalf("gzip POST: %d %s", status(w), w.Body)
	}
	if w := s.do("POST", "/v1/stream/g", gzipped(t, ""), "Content-Type: text/plain", "Content-Encoding: gzip"); status(w) != 400 || errorCode(t, w) != "EMPTY_BODY" {
		t.Fatalf("empty gzip POST: %d %s", status(w), w.Body)
	}
	bomb := gzipped(t, strings.Repeat("\x00", 8<<20))
	if len(bomb) > 64<<10 {
		t.Fatalf("bomb of %d bytes", len(bomb))
	}
	if w := s.do("POST", "/v1/stream/g", bomb, "Content-Type: text/plain", "Content-Encoding: gzip"); status(w) != 413 || errorCode(t, w) != "PAYLOAD_TOO_LARGE" {
		t.Fatalf("gzip bomb: %d %s", status(w), w.Body)
	}
	if w := s.do("POST", "/v1/stream/g", "not gzip at all", "Content-Type: text/plain", "Content-Encoding: gzip"); status(w) != 400 || errorCode(t, w) != "INVALID_BODY" {
		t.Fatalf("corrupt gzip: %d %s", status(w), w.Body)
	}
	if w := s.do("POST", "/v1/stream/g", "zzz", "Content-Type: text/plain", "Content-Encoding: br"); status(w) != 415 || errorCode(t, w) != "UNSUPPORTED_CONTENT_ENCODING" {
		t.Fatalf("br body: %d %s", status(w), w.Body)
	}
	if w := s.do("POST", "/v1/stream/g", "!", "Content-Type: text/plain", "Content-Encoding: identity"); status(w) != 204 {
		t.Fatalf("identity body: %d %s", status(w), w.Body)
	}
	if w := s.do("PUT", "/v1/stream/j", gzipped(t, `[{"a":1},{"b":2}]`), "Content-Type: application/json", "Content-Encoding: gzip"); status(w) != 201 {
		t.Fatalf("gzip JSON PUT: %d %s", status(w), w.Body)
	}
	if got := s.do("GET", "/v1/stream/g?offset=-1", "").Body.String(); got != "created appended!" {
		t.Fatalf("stored %q", got)
	}
	if got := s.do("GET", "/v1/stream/j?offset=-1", "").Body.String(); got != `[{"a":1},{"b":2}]` {
		t.Fatalf("stored JSON %q", got)
	}
}

// Over a real connection, a bootstrap large enough to be written and flushed in several
// chunks decodes whole (gzip through Go's transparent decoding, zstd by hand).
func TestCompressedBootstrapOverHTTP(t *testing.T) {
	s := newTestServer(t)
	ts := httptest.NewServer(s.h)
	defer ts.Close()
	chunk := strings.Repeat("0123456789", 10000) // 100 KB per append
	s.do("PUT", "/v1/stream/big", chunk, "Content-Type: text/plain")
	for i := 0; i < 29; i++ {
		s.do("POST", "/v1/stream/big", chunk, "Content-Type: text/plain")
	}
	id := s.do("GET", "/default/big/bootstrap", "")
	resp, err := http.Get(ts.URL + "/default/big/bootstrap") // Go asks for gzip and decodes it
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || !resp.Uncompressed || len(body) < 3_000_000 {
		t.Fatalf("gzip bootstrap: %v, uncompressed %v, %d bytes", err, resp.Uncompressed, len(body))
	}
	req, _ := http.NewRequest("GET", ts.URL+"/default/big/bootstrap", nil)
	req.Header.Set("Accept-Encoding", "zstd")
	resp, err = http.DefaultClient.Do(req)
	if err != nil || resp.Header.Get("Content-Encoding") != "zstd" {
		t.Fatalf("zstd bootstrap: %v %v", resp, err)
	}
	zr, _ := zstd.NewReader(resp.Body)
	zbody, err := io.ReadAll(zr)
	zr.Close()
	resp.Body.Close()
	if err != nil || len(zbody) != len(body) {
		t.Fatalf("zstd bootstrap: %v, %d bytes, gzip %d", err, len(zbody), len(body))
	}
	// the parts match the identity body's but for the random boundary
	if n := strings.Count(string(zbody), chunk); n != 30 || strings.Count(id.Body.String(), chunk) != 30 {
		t.Fatalf("%d chunks in the zstd body", n)
	}
}

// A HEAD carries the coding headers its GET would for the same Accept-Encoding (RFC 9110
// §9.3.2): the same ETag and Content-Encoding on both sides of the 1 KiB threshold, text
// and JSON; an ETag from either validates the other (If-None-Match: 304).
func TestHeadMatchesCompressedGet(t *testing.T) {
	s := newTestServer(t)
	for _, c := range []struct{ ct, unit string }{{"text/plain", "x"}, {"application/json", `"y",`}} {
		for _, n := range []int{0, 1, 255, 256, 1022, 1023, 1024, 1025, 3000} {
			path := "/v1/stream/h-" + strings.ReplaceAll(c.ct, "/", "-") + "-" + strconv.Itoa(n)
			body := strings.Repeat(c.unit, n)
			if c.ct == "application/json" {
				// 254 messages of 4 canonical bytes, then one that makes them n: n 1022 and 1023
				// make the array 1023 and 1024 bytes, the threshold's two sides.
				if n == 1022 || n == 1023 {
					body = strings.Repeat(c.unit, 254) + `"` + strings.Repeat("y", n-1016-3) + `",`
				}
				body = "[" + strings.TrimSuffix(body, ",") + "]"
			}
			if w := s.do("PUT", path, body, "Content-Type: "+c.ct); status(w) != 201 {
				t.Fatalf("PUT %s: %d %s", path, status(w), w.Body)
			}
			for _, ae := range []string{"", "gzip", "zstd"} {
				hdr := []string{}
				if ae != "" {
					hdr = append(hdr, "Accept-Encoding: "+ae)
				}
				g, h := s.do("GET", path, "", hdr...), s.do("HEAD", path, "", hdr...)
				for _, name := range []string{"ETag", "Content-Encoding", "Vary"} {
					if g.Header().Get(name) != h.Header().Get(name) {
						t.Errorf("%s (%d units, %q): GET %s %q, HEAD %q", path, n, ae, name, g.Header().Get(name), h.Header().Get(name))
					}
				}
				for _, m := range []string{"GET", "HEAD"} {
					w := s.do(m, path, "", append(hdr, "If-None-Match: "+h.Header().Get("ETag"))...)
					if status(w) != 304 || w.Header().Get("ETag") != h.Header().Get("ETag") {
						t.Errorf("%s %s (%q) with the HEAD's ETag %s: %d ETag %q", m, path, ae, h.Header().Get("ETag"), status(w), w.Header().Get("ETag"))
					}
				}
			}
		}
	}
}
