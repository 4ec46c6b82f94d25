package ops

import (
	"bufio"
	"bytes"
	"mime"
	"net"
	"net/http"
	"strings"

	"github.com/dsd-project/dsd/httpd"
	"github.com/dsd-project/dsd/model"
)

// refuse answers a request the admin listener will not serve with the protocol's JSON
// error body (D7, httpd.WriteError): one error shape on every listener.
func refuse(w http.ResponseWriter, r *http.Request, err error) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	httpd.WriteError(w, r, err)
}

// detailed is base with a message naming what is wrong.
func detailed(base *model.Error, msg string) error { return &model.Detailed{Base: base, Msg: msg} }

// adminRoutes names what the admin listener serves, for its 404s.
const adminRoutes = "the admin listener serves /metrics, /healthz, /readyz, /backup, /debug/pprof/ and, with the console, /buckets, /lineage/{bucket}/{stream} and /console/"

// jsonErrors makes the 4xx responses that handlers of other packages write as text
// (ServeMux's 404 and 405, the console's file server, pprof's parameter errors) D7 JSON
// errors, with their text as the message; headers such as Allow are kept. JSON responses
// and every other status pass through.
type jsonErrors struct {
	http.ResponseWriter
	r       *http.Request
	status  int // the held error status, 0 while passing through
	text    bytes.Buffer
	started bool
}

// held lists the statuses jsonErrors rewrites, with the code of each.
var held = map[int]*model.Error{
	http.StatusBadRequest: model.ErrBadQuery, http.StatusUnauthorized: model.ErrUnauthorized,
	http.StatusForbidden: model.ErrForbidden, http.StatusNotFound: model.ErrRouteNotFound,
	http.StatusMethodNotAllowed: model.ErrMethodNotAllowed,
}

func (w *jsonErrors) WriteHeader(code int) {
	if _, ok := held[code]; ok && !w.started && !isJSON(w.Header().Get("Content-Type")) {
		w.status = code
		return
	}
	w.started = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *jsonErrors) Write(p []byte) (int, error) {
	if w.status != 0 {
		if w.text.Len() < 1024 {
			w.text.Write(p)
		}
		return len(p), nil
	}
	w.started = true
	return w.ResponseWriter.Write(p)
}

// FlushError is what http.ResponseController.Flush calls (pprof's profile and trace,
// the console's live reads); a held error is not flushed.
func (w *jsonErrors) FlushError() error {
	if w.status != 0 {
		return nil
	}
	w.started = true
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// Flush implements http.Flusher.
func (w *jsonErrors) Flush() { _ = w.FlushError() }

// Unwrap gives http.ResponseController the underlying writer (deadlines).
func (w *jsonErrors) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Hijack implements http.Hijacker (the console's SSE reads through the protocol handler).
func (w *jsonErrors) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	w.started = true
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

// finish writes the held error, if any.
func (w *jsonErrors) finish() {
	if w.status == 0 {
		return
	}
	h := w.Header()
	h.Del("Content-Type")
	h.Del("Content-Length")
	refuse(w.ResponseWriter, w.r, heldError(w.status, strings.TrimSpace(w.text.String()), w.r, h.Get("Allow")))
}

// heldError is the D7 error for a text error response: its text, or what the route
// table knows when the text is net/http's generic one.
func heldError(status int, text string, r *http.Request, allow string) error {
	switch {
	case status == http.StatusNotFound && (text == "" || text == "404 page not found"):
		text = "no admin resource " + r.URL.Path + ": " + adminRoutes
	case status == http.StatusMethodNotAllowed:
		text = r.Method + " is not allowed on " + r.URL.Path + "; allowed: " + allow
	case text == "":
		text = held[status].Msg
	}
	return detailed(held[status], text)
}

func isJSON(ct string) bool {
	mt, _, _ := mime.ParseMediaType(ct)
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// The console's live reads need these through the wrapper.
var (
	_ http.Hijacker = (*jsonErrors)(nil)
	_ http.Flusher  = (*jsonErrors)(nil)
)
