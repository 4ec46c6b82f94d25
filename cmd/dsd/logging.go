package main

import (
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/dsd-project/dsd/ops"
)

// logFlushInterval bounds how long a request log line waits in the log buffer.
const logFlushInterval = 200 * time.Millisecond

// logs are dsd's loggers on one buffered writer (ops.LogWriter): log writes its lines at
// once, requests (the request log, nil with --log-requests=false) into the buffer.
type logs struct {
	log      *slog.Logger
	requests *slog.Logger
	w        *ops.LogWriter
}

// newLogs returns the slog loggers of --log-format and --log-level, writing to w. Close
// must be called to write out the buffered lines.
func newLogs(format, level string, logRequests bool, w io.Writer) (*logs, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	if format != "text" && format != "json" {
		return nil, fmt.Errorf("--log-format %q: want text or json", format)
	}
	lw := ops.NewLogWriter(w, logFlushInterval)
	l := &logs{log: slog.New(ops.NewLogHandler(lw, format == "json", opts)), w: lw}
	if logRequests {
		l.requests = slog.New(ops.NewLogHandler(lw.Deferred(), format == "json", opts))
	}
	return l, nil
}

// Flush writes out the buffered request lines (SIGHUP).
func (l *logs) Flush() { _ = l.w.Flush() }

// Close writes out the buffered request lines and stops the flush timer.
func (l *logs) Close() { _ = l.w.Close() }
