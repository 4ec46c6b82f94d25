package ops

import (
	"io"
	"sync"
	"time"
)

// LogWriter batches log output to an underlying writer (dsd's stderr) so that the request
// log costs no write(2) per request (issue 19). Lines written through Deferred wait in a
// buffer, written out when it holds logFlushBytes, every interval, on Flush and on Close;
// lines written through the LogWriter itself go out at once, after what is buffered (the
// start-up line, warnings and errors keep their order and are never late). A request log
// line is not acknowledged data: a crash loses at most one interval of them.
type LogWriter struct {
	mu     sync.Mutex
	w      io.Writer
	buf    []byte
	stop   chan struct{}
	done   chan struct{}
	closed bool
}

// logFlushBytes is the buffered size at which deferred lines are written out.
const logFlushBytes = 32 << 10

// NewLogWriter returns a LogWriter on w flushing deferred lines every interval (> 0).
func NewLogWriter(w io.Writer, interval time.Duration) *LogWriter {
	lw := &LogWriter{w: w, buf: make([]byte, 0, 2*logFlushBytes), stop: make(chan struct{}),
		done: make(chan struct{})}
	go lw.tick(interval)
	return lw
}

func (lw *LogWriter) tick(interval time.Duration) {
	defer close(lw.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			lw.Flush()
		case <-lw.stop:
			return
		}
	}
}

// Write writes what is buffered, then p, now (one write when both fit the buffer).
func (lw *LogWriter) Write(p []byte) (int, error) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if len(lw.buf)+len(p) <= cap(lw.buf) {
		lw.buf = append(lw.buf, p...)
		return len(p), lw.flushLocked()
	}
	if err := lw.flushLocked(); err != nil {
		return 0, err
	}
	return lw.w.Write(p)
}

// Deferred returns the writer whose lines wait in the buffer (the request log).
func (lw *LogWriter) Deferred() io.Writer { return deferredWriter{lw} }

type deferredWriter struct{ lw *LogWriter }

func (d deferredWriter) Write(p []byte) (int, error) {
	lw := d.lw
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.closed {
		return lw.w.Write(p) // after Close (a request ending during shutdown): at once
	}
	lw.buf = append(lw.buf, p...)
	if len(lw.buf) >= logFlushBytes {
		return len(p), lw.flushLocked()
	}
	return len(p), nil
}

// Flush writes out what is buffered.
func (lw *LogWriter) Flush() error {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.flushLocked()
}

func (lw *LogWriter) flushLocked() error {
	if len(lw.buf) == 0 {
		return nil
	}
	_, err := lw.w.Write(lw.buf)
	if cap(lw.buf) > 4*logFlushBytes {
		lw.buf = make([]byte, 0, 2*logFlushBytes) // one huge line must not stay pinned
	} else {
		lw.buf = lw.buf[:0]
	}
	return err
}

// Close stops the timer and writes out what is buffered; later lines are written at once.
func (lw *LogWriter) Close() error {
	lw.mu.Lock()
	if lw.closed {
		lw.mu.Unlock()
		return nil
	}
	lw.closed = true
	lw.mu.Unlock()
	close(lw.stop)
	<-lw.done
	return lw.Flush()
}
