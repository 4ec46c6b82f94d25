package ops

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"
)

// NewLogHandler returns slog's text handler (json false) or JSON handler on w with opts,
// able to write the request line (Observe) without slog's per-record work: the line is
// appended field by field into a reused buffer, byte for byte what the slog handler
// writes for the same record. The fast path is taken only when opts has no ReplaceAttr
// and no AddSource, and only for fields that need no escaping; anything else goes
// through slog.
func NewLogHandler(w io.Writer, json bool, opts *slog.HandlerOptions) slog.Handler {
	lw := &lockedWriter{w: w}
	h := &logHandler{w: lw, json: json, fast: opts == nil || (opts.ReplaceAttr == nil && !opts.AddSource)}
	if json {
		h.Handler = slog.NewJSONHandler(lw, opts)
	} else {
		h.Handler = slog.NewTextHandler(lw, opts)
	}
	return h
}

// logHandler is a slog handler with the request line's fast path (requestLine).
type logHandler struct {
	slog.Handler
	w    *lockedWriter
	json bool
	fast bool
}

// lockedWriter serialises the slog handler's writes and the fast path's on one writer.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// requestLine is the content of one request log line (docs/deploy.md, "Logs").
type requestLine struct {
	requestFields
	time     time.Time
	status   int
	bytes    int64
	duration time.Duration
	code     string // "" for none
	live     string // "" for none
}

// requestFields are what the log line and the metrics take from the request itself.
type requestFields struct {
	method string
	path   string // escaped path
	query  string // raw query, "" for none
	remote string
	proto  string
}

// stamps is the formatted current second, shared by every request log.
var stamps stampCache

var lineBufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// write writes l as the "request" record at info; false when the fast path does not
// apply (the caller logs through slog).
func (h *logHandler) write(l *requestLine) bool {
	if !h.fast || !plain(l.method) || !plain(l.path) || !plain(l.query) || !plain(l.code) ||
		!plain(l.live) || !plain(l.remote) || !plain(l.proto) {
		return false
	}
	bp := lineBufs.Get().(*[]byte)
	var b []byte
	if h.json {
		b = l.appendJSON((*bp)[:0])
	} else {
		b = l.appendText((*bp)[:0])
	}
	_, _ = h.w.Write(b) // as slog's handlers: a log write error is not the request's
	if cap(b) <= 4<<10 {
		*bp = b
		lineBufs.Put(bp)
	}
	return true
}

// appendText appends l as slog.TextHandler writes it.
func (l *requestLine) appendText(b []byte) []byte {
	b = append(b, "time="...)
	b = stamps.appendMillis(b, l.time)
	b = append(b, " level=INFO msg=request method="...)
	b = appendTextString(b, l.method, "")
	b = append(b, " path="...)
	b = appendTextString(b, l.path, l.query)
	b = append(b, " status="...)
	b = strconv.AppendInt(b, int64(l.status), 10)
	b = append(b, " bytes="...)
	b = strconv.AppendInt(b, l.bytes, 10)
	b = append(b, " duration="...)
	b = append(b, l.duration.String()...)
	if l.code != "" {
		b = append(b, " code="...)
		b = appendTextString(b, l.code, "")
	}
	if l.live != "" {
		b = append(b, " live="...)
		b = appendTextString(b, l.live, "")
	}
	b = append(b, " remote="...)
	b = appendTextString(b, l.remote, "")
	b = append(b, " proto="...)
	b = appendTextString(b, l.proto, "")
	return append(b, '\n')
}

// appendJSON appends l as slog.JSONHandler writes it.
func (l *requestLine) appendJSON(b []byte) []byte {
	b = append(b, `{"time":"`...)
	b = stamps.appendNano(b, l.time)
	b = append(b, `","level":"INFO","msg":"request","method":"`...)
	b = append(b, l.method...)
	b = append(b, `","path":"`...)
	b = append(b, l.path...)
	if l.query != "" {
		b = append(b, '?')
		b = append(b, l.query...)
	}
	b = append(b, `","status":`...)
	b = strconv.AppendInt(b, int64(l.status), 10)
	b = append(b, `,"bytes":`...)
	b = strconv.AppendInt(b, l.bytes, 10)
	b = append(b, `,"duration":`...)
	b = strconv.AppendInt(b, int64(l.duration), 10)
	if l.code != "" {
		b = append(b, `,"code":"`...)
		b = append(b, l.code...)
		b = append(b, '"')
	}
	if l.live != "" {
		b = append(b, `,"live":"`...)
		b = append(b, l.live...)
		b = append(b, '"')
	}
	b = append(b, `,"remote":"`...)
	b = append(b, l.remote...)
	b = append(b, `","proto":"`...)
	b = append(b, l.proto...)
	return append(b, "\"}\n"...)
}

// plain reports whether s is printable ASCII without '"' and '\\': what both slog
// handlers write as it is (the text handler in quotes when it holds ' ' or '=').
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// appendTextString appends the plain string s, followed by "?" and q when q is not
// empty, quoted as slog's text handler quotes it: when empty or holding ' ' or '='.
func appendTextString(b []byte, s, q string) []byte {
	quote := s == "" && q == "" || needsTextQuote(s) || q != "" && needsTextQuote(q)
	if quote {
		b = append(b, '"')
	}
	b = append(b, s...)
	if q != "" {
		b = append(b, '?')
		b = append(b, q...)
	}
	if quote {
		b = append(b, '"')
	}
	return b
}

func needsTextQuote(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' || s[i] == '=' {
			return true
		}
	}
	return false
}

// logRequest writes l to log: through the fast path when log's handler has one, else as
// an slog record with the same attributes.
func logRequest(log *slog.Logger, l *requestLine) {
	h, _ := log.Handler().(*logHandler)
	if h != nil {
		if !h.Enabled(context.Background(), slog.LevelInfo) || h.write(l) {
			return
		}
	}
	r := l.record()
	if log.Handler().Enabled(context.Background(), slog.LevelInfo) {
		_ = log.Handler().Handle(context.Background(), r)
	}
}

// record is l as an slog record: the attributes the fast path writes, in its order.
func (l *requestLine) record() slog.Record {
	path := l.path
	if l.query != "" {
		path += "?" + l.query
	}
	r := slog.NewRecord(l.time, slog.LevelInfo, "request", 0)
	r.AddAttrs(slog.String("method", l.method), slog.String("path", path),
		slog.Int("status", l.status), slog.Int64("bytes", l.bytes), slog.Duration("duration", l.duration))
	if l.code != "" {
		r.AddAttrs(slog.String("code", l.code))
	}
	if l.live != "" {
		r.AddAttrs(slog.String("live", l.live))
	}
	r.AddAttrs(slog.String("remote", l.remote), slog.String("proto", l.proto))
	return r
}
