package fuzz

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// FuzzFlatNames: any path under /v1/stream/ is either a stream whose name is the decoded
// path (D1 amended: created 201 with a Location at that path, then listed in the compat
// bucket under exactly that name) or a 4xx that creates nothing; never a 5xx.
func FuzzFlatNames(f *testing.F) {
	for _, s := range []string{"a", "a/b/c", "a//b", "a/./b", "a/%2E%2E", "a%2Fb", "%00", "__ds/x",
		"streams", "x/streams", "é/%C3%A9", "a/", "/a", "a%zz", strings.Repeat("ab/", 400)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rest string) {
		if strings.ContainsAny(rest, "?#") || strings.ContainsAny(rest, " \t\r\n") {
			return
		}
		h := sharedHandler(t)
		p := "/v1/stream/" + rest
		decoded, err := url.PathUnescape(p)
		if err != nil {
			return // net/http refuses such a request line before any handler
		}
		req := httptest.NewRequest("PUT", "http://x/", nil)
		req.URL = &url.URL{Path: decoded, RawPath: p}
		req.RequestURI = p
		req.Header.Set("Content-Type", "text/plain")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		switch {
		case w.Code >= 500 && w.Code != http.StatusNotImplemented:
			t.Fatalf("PUT %s: %d %s", p, w.Code, w.Body)
		case w.Code == http.StatusCreated || w.Code == http.StatusOK:
			name := decodeSegments(t, rest)
			lu, err := url.Parse(w.Header().Get("Location"))
			if w.Code == http.StatusCreated && (err != nil || lu.Path != decoded) {
				t.Fatalf("PUT %s: Location %q", p, w.Header().Get("Location"))
			}
			lw := httptest.NewRecorder()
			lr := httptest.NewRequest("GET", "/default/streams?prefix="+url.QueryEscape(name)+"&limit=1", nil)
			h.ServeHTTP(lw, lr)
			if !strings.Contains(lw.Body.String(), `"stream_id":`) {
				t.Fatalf("PUT %s created %q but the listing has %s", p, name, lw.Body)
			}
			for _, seg := range strings.Split(name, "/") {
				if seg == "" || seg == "." || seg == ".." {
					t.Fatalf("PUT %s accepted name %q", p, name)
				}
			}
		}
	})
}

// decodeSegments is the stream name a flat path names: segments decoded, joined with '/'.
func decodeSegments(t *testing.T, rest string) string {
	segs := strings.Split(rest, "/")
	for i, s := range segs {
		d, err := url.PathUnescape(s)
		if err != nil {
			t.Fatalf("accepted a bad escape in %q", rest)
		}
		segs[i] = d
	}
	return strings.Join(segs, "/")
}
