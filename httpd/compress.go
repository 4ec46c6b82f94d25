package httpd

import (
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// minCompressBytes is the smallest body dsd compresses (D12): below it the coding costs
// more than it saves.
const minCompressBytes = 1024

// compressible reports whether a request's response may be compressed (D12): GETs of
// finite reads (catch-up, snapshots), bootstraps and listings. Live reads (SSE and
// long-poll) are never compressed: their events must reach the client as written.
func compressible(r *http.Request, k targetKind) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	switch k {
	case tStream:
		return !liveQuery(r.URL.RawQuery)
	case tBootstrap, tBucketList, tSnapshot, tSnapshotAt:
		return true
	}
	return false
}

// liveQuery reports whether a query names the live parameter, as parseReadQuery reads
// it (percent-encoded names included).
func liveQuery(raw string) bool {
	if !strings.Contains(raw, "%") {
		return strings.Contains(raw, "live")
	}
	v, _ := url.ParseQuery(raw)
	_, ok := v["live"]
	return ok
}

// negotiateCoding picks the response coding from Accept-Encoding (RFC 9110 §12.5.3):
// "zstd" or "gzip", whichever has the higher q-value (zstd on a tie), or "" for identity.
// "*" counts as gzip when gzip is not listed itself (so "gzip;q=0, *" stays identity).
func negotiateCoding(accept []string) string {
	q := map[string]float64{}
	for _, line := range accept {
		for _, part := range strings.Split(line, ",") {
			name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			v := 1.0
			if s, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
				if f, err := strconv.ParseFloat(s, 64); err == nil {
					v = f
				}
			}
			switch name = strings.ToLower(strings.TrimSpace(name)); name {
			case "x-gzip":
				name = "gzip"
			case "gzip", "zstd", "*":
			default:
				continue
			}
			if _, seen := q[name]; !seen {
				q[name] = v
			}
		}
	}
	if _, listed := q["gzip"]; !listed {
		q["gzip"] = q["*"]
	}
	switch gz, zs := q["gzip"], q["zstd"]; {
	case zs > 0 && zs >= gz:
		return "zstd"
	case gz > 0:
		return "gzip"
	}
	return ""
}

// compressWriter encodes a 200 response body with coding once it reaches
// minCompressBytes; smaller bodies, other statuses and responses that set their own
// Content-Encoding pass unchanged. A compressed response gets Content-Encoding, loses
// Content-Length, and its ETag carries the coding as a suffix ("...-gzip"), so that each
// encoding has its own validator; offsets and protocol headers are unchanged. A HEAD gets
// the headers its GET would (RFC 9110 §9.3.2): decided from the GET body's size, its
// Content-Length or, for a stream's HEAD, the size set by setHeadBodySize.
type compressWriter struct {
	http.ResponseWriter
	coding  string
	status  int    // held 200, until the coding is decided
	pending []byte // body held until the coding is decided
	enc     encoder
	done    bool // decided: pass through (enc nil) or encode
	// suffixedINM: the request's If-None-Match named this coding's ETag (rewritten for
	// the handler), so a 304 answers with that ETag.
	suffixedINM bool
	head        bool
	headSize    int // the GET body's size for a HEAD (setHeadBodySize); -1 unknown
}

type encoder interface {
	io.Writer
	Flush() error
	Close() error
}

// compressResponse wraps w when the request (its target t parsed and admitted: err nil)
// may be compressed and asks for a coding; the returned finish must run after the
// handler. Vary: Accept-Encoding is set on every compressible response.
func compressResponse(w http.ResponseWriter, r *http.Request, t target, err error) (http.ResponseWriter, func()) {
	if err != nil || !compressible(r, t.kind) {
		return w, func() {}
	}
	w.Header().Add("Vary", "Accept-Encoding")
	coding := negotiateCoding(r.Header.Values("Accept-Encoding"))
	if coding == "" {
		return w, func() {}
	}
	cw := &compressWriter{ResponseWriter: w, coding: coding, head: r.Method == http.MethodHead, headSize: -1}
	if inm := r.Header.Get("If-None-Match"); strings.Contains(inm, "-"+coding+`"`) {
		r.Header.Set("If-None-Match", strings.ReplaceAll(inm, "-"+coding+`"`, `"`))
		cw.suffixedINM = true
	}
	return cw, cw.finish
}

func (w *compressWriter) WriteHeader(code int) {
	if w.done || w.status != 0 {
		w.ResponseWriter.WriteHeader(code)
		return
	}
	if code == http.StatusOK && w.head {
		w.decideHead()
	} else if code == http.StatusOK && w.Header().Get("Content-Encoding") == "" {
		w.status = code // decided at minCompressBytes or at the end
		return
	}
	if code == http.StatusNotModified && w.suffixedINM {
		w.suffixETag()
	}
	w.done = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *compressWriter) Write(p []byte) (int, error) {
	if !w.done && w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if w.done {
		if w.enc != nil {
			return w.enc.Write(p)
		}
		return w.ResponseWriter.Write(p)
	}
	w.pending = append(w.pending, p...)
	if len(w.pending) >= minCompressBytes {
		if err := w.start(); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// decideHead gives a HEAD the coding headers of its GET: Content-Encoding and the
// suffixed ETag when the GET body would reach minCompressBytes (unknown size: neither).
func (w *compressWriter) decideHead() {
	hd := w.Header()
	n := w.headSize
	if cl := hd.Get("Content-Length"); n < 0 && cl != "" {
		n, _ = strconv.Atoi(cl)
	}
	if n >= minCompressBytes && hd.Get("Content-Encoding") == "" {
		hd.Set("Content-Encoding", w.coding)
		hd.Del("Content-Length")
		w.suffixETag()
	}
}

// setHeadBodySize tells a HEAD's compressWriter, if any, the size of the body its GET
// would send, for a handler that sends no Content-Length.
func setHeadBodySize(w http.ResponseWriter, n int) {
	if cw, ok := w.(*compressWriter); ok {
		cw.headSize = n
	}
}

// start begins the encoded response with the held bytes.
func (w *compressWriter) start() error {
	hd := w.Header()
	hd.Set("Content-Encoding", w.coding)
	hd.Del("Content-Length")
	w.suffixETag()
	w.done = true
	w.ResponseWriter.WriteHeader(w.status)
	w.enc = newEncoder(w.coding, w.ResponseWriter)
	_, err := w.enc.Write(w.pending)
	w.pending = nil
	return err
}

// suffixETag marks the ETag as this coding's: "x" -> "x-gzip" (W/ kept).
func (w *compressWriter) suffixETag() {
	hd := w.Header()
	if et := hd.Get("ETag"); strings.HasSuffix(et, `"`) {
		hd.Set("ETag", et[:len(et)-1]+"-"+w.coding+`"`)
	}
}

// FlushError flushes what is encoded so far; a body still below minCompressBytes stays
// held (it is sent, unencoded if it stays small, when the handler ends).
func (w *compressWriter) FlushError() error {
	if !w.done {
		return nil
	}
	if w.enc != nil {
		if err := w.enc.Flush(); err != nil {
			return err
		}
	}
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap gives http.ResponseController the underlying writer.
func (w *compressWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish sends a held small body unencoded, or ends the encoded stream.
func (w *compressWriter) finish() {
	switch {
	case !w.done && w.status != 0:
		w.done = true
		w.ResponseWriter.WriteHeader(w.status)
		if len(w.pending) > 0 {
			_, _ = w.ResponseWriter.Write(w.pending)
		}
	case w.enc != nil:
		_ = w.enc.Close()
		putEncoder(w.coding, w.enc)
		w.enc = nil
	}
}

var (
	gzipPool sync.Pool // *gzip.Writer
	zstdPool sync.Pool // *zstd.Encoder
)

// newEncoder returns a pooled encoder of coding writing to dst.
func newEncoder(coding string, dst io.Writer) encoder {
	if coding == "zstd" {
		if z, ok := zstdPool.Get().(*zstd.Encoder); ok {
			z.Reset(dst)
			return z
		}
		z, _ := zstd.NewWriter(dst, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedDefault))
		return z
	}
	if g, ok := gzipPool.Get().(*gzip.Writer); ok {
		g.Reset(dst)
		return g
	}
	g, _ := gzip.NewWriterLevel(dst, gzip.DefaultCompression)
	return g
}

func putEncoder(coding string, e encoder) {
	switch v := e.(type) {
	case *zstd.Encoder:
		v.Reset(io.Discard)
		zstdPool.Put(v)
	case *gzip.Writer:
		v.Reset(io.Discard)
		gzipPool.Put(v)
	}
}
