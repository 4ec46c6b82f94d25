package console

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The page and its assets are served below /console/; the API mount passes GET and HEAD to
// the public handler with the prefix removed and refuses writes with 405.
func TestHandler(t *testing.T) {
	var seen []string
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery+" "+r.Header.Get("Authorization"))
	})
	h := Handler(api)
	do := func(method, path string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(method, path, nil)
		r.Header.Set("Authorization", "Bearer tok")
		h.ServeHTTP(w, r)
		return w
	}
	for path, want := range map[string]string{"/console/": "<title>dsd console", "/console/app.js": "liveTail", "/console/style.css": "--accent"} {
		if w := do("GET", path); w.Code != 200 || !strings.Contains(w.Body.String(), want) || w.Header().Get("Content-Security-Policy") == "" {
			t.Errorf("GET %s: %d, CSP %q", path, w.Code, w.Header().Get("Content-Security-Policy"))
		}
	}
	if w := do("GET", "/console"); w.Code != http.StatusMovedPermanently || w.Header().Get("Location") != "/console/" {
		t.Errorf("GET /console: %d %q", w.Code, w.Header().Get("Location"))
	}
	do("GET", "/console/api/shop/orders?offset=-1&live=sse")
	do("HEAD", "/console/api/shop/orders")
	if got := strings.Join(seen, "|"); got != "GET /shop/orders?offset=-1&live=sse Bearer tok|HEAD /shop/orders? Bearer tok" {
		t.Fatalf("API mount passed %q", got)
	}
	for _, m := range []string{"POST", "PUT", "DELETE"} {
		if w := do(m, "/console/api/shop/orders"); w.Code != 405 || !strings.Contains(w.Body.String(), "METHOD_NOT_ALLOWED") || w.Header().Get("Allow") != "GET, HEAD" {
			t.Errorf("%s: %d %s", m, w.Code, w.Body)
		}
	}
	if len(seen) != 2 {
		t.Fatalf("writes reached the API: %v", seen)
	}
}
