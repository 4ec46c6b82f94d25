// Package console is dsd's web console (DESIGN.md D12): plain HTML, CSS and JavaScript
// embedded in the binary, served on the admin listener at /console/. It lists buckets
// (the admin listener's GET /buckets), a bucket's streams, a stream's metadata, attributes,
// fork parent (GET /lineage/...), recent messages and a live SSE tail, and a few figures of
// /metrics.
//
// The console reads streams through the public protocol like any other client. So that it
// needs no second origin (CORS, a configured public URL, TLS on another port), the admin
// listener serves the public handler itself, read-only, under /console/api/: a GET of
// /console/api/{bucket}/{stream}?offset=-1 is the public GET /{bucket}/{stream}?offset=-1,
// with the same bearer tokens and scopes. Writes go to the public listener only.
package console

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed static
var static embed.FS

// APIPrefix is where the public protocol is mounted, read-only, below the console.
const APIPrefix = "/console/api"

// Handler serves the console under /console/ and api (the public protocol handler) under
// APIPrefix; methods other than GET and HEAD on APIPrefix get 405 with a JSON error.
func Handler(api http.Handler) http.Handler {
	files, _ := fs.Sub(static, "static")
	mux := http.NewServeMux()
	mux.Handle(APIPrefix+"/", http.StripPrefix(APIPrefix, readOnly(api)))
	mux.Handle("/console/", http.StripPrefix("/console/", assets(http.FileServerFS(files))))
	mux.Handle("/console", http.RedirectHandler("/console/", http.StatusMovedPermanently))
	return mux
}

// readOnly admits GET and HEAD only.
func readOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusMethodNotAllowed)
			_, _ = w.Write([]byte(`{"error":{"code":"METHOD_NOT_ALLOWED","message":"the console's API mount is read-only; send writes to the public listener"}}` + "\n"))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// assets serves the embedded files revalidated on every load (they change with the
// binary), with a policy that allows nothing but this origin.
func assets(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Cache-Control", "no-cache")
		hd.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
		hd.Set("X-Content-Type-Options", "nosniff")
		h.ServeHTTP(w, r)
	})
}
