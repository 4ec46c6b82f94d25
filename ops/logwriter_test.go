package ops

import (
	"strings"
	"testing"
	"time"
)

// countingWriter records each write it gets.
type countingWriter struct {
	syncBuilder
	writes int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.writes++
	c.mu.Unlock()
	return c.syncBuilder.Write(p)
}

func (c *countingWriter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.writes
}

// Deferred lines wait for a flush; a direct line goes out at once, after them, in one
// write; Close writes out the rest, and lines after Close go out at once.
func TestLogWriterOrderAndFlush(t *testing.T) {
	var out countingWriter
	lw := NewLogWriter(&out, time.Hour)
	d := lw.Deferred()
	d.Write([]byte("r1\n"))
	d.Write([]byte("r2\n"))
	if out.String() != "" {
		t.Fatalf("deferred lines written before a flush: %q", out.String())
	}
	lw.Write([]byte("warn\n"))
	if out.String() != "r1\nr2\nwarn\n" || out.count() != 1 {
		t.Fatalf("after a direct line: %q in %d writes", out.String(), out.count())
	}
	d.Write([]byte("r3\n"))
	lw.Flush()
	if out.String() != "r1\nr2\nwarn\nr3\n" {
		t.Fatalf("after Flush: %q", out.String())
	}
	d.Write([]byte("r4\n"))
	lw.Close()
	d.Write([]byte("r5\n"))
	if out.String() != "r1\nr2\nwarn\nr3\nr4\nr5\n" {
		t.Fatalf("after Close: %q", out.String())
	}
}

// Deferred lines go out on the timer, and once logFlushBytes are waiting.
func TestLogWriterTimerAndSize(t *testing.T) {
	var out countingWriter
	lw := NewLogWriter(&out, 10*time.Millisecond)
	defer lw.Close()
	lw.Deferred().Write([]byte("tick\n"))
	for i := 0; i < 500 && out.String() == ""; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if out.String() != "tick\n" {
		t.Fatalf("the timer did not flush: %q", out.String())
	}
	big := NewLogWriter(&out, time.Hour)
	defer big.Close()
	line := []byte(strings.Repeat("x", 99) + "\n")
	before := out.count()
	for n := 0; n < logFlushBytes; n += len(line) {
		big.Deferred().Write(line)
	}
	if out.count() != before+1 {
		t.Fatalf("%d writes for %d buffered bytes, want 1", out.count()-before, logFlushBytes)
	}
}
