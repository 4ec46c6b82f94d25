package main

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// readAll drains an sseReader into "name|data" strings.
func readAll(t *testing.T, r io.Reader) []string {
	t.Helper()
	s := newSSEReader(r)
	var out []string
	for {
		ev, err := s.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		out = append(out, ev.Name+"|"+string(ev.Data))
	}
}

func equalStrings(a, b []string) bool {
	return strings.Join(a, "\x00") == strings.Join(b, "\x00")
}

// The framing a Durable Streams server sends (§5.8): text payload lines each get "data:",
// the control event follows every data event.
const nodeStyle = "event: data\ndata:hello\ndata:\n\n" +
	"event: control\ndata:{\"streamNextOffset\":\"0000000000000000_0000000000000006\",\"upToDate\":true}\n\n"

func TestSSEReaderProtocolFraming(t *testing.T) {
	got := readAll(t, strings.NewReader(nodeStyle))
	want := []string{"data|hello\n", `control|{"streamNextOffset":"0000000000000000_0000000000000006","upToDate":true}`}
	if !equalStrings(got, want) {
		t.Fatalf("events\n got %q\nwant %q", got, want)
	}
	c, err := parseControl([]byte(strings.TrimPrefix(got[1], "control|")))
	if err != nil || c.StreamNextOffset != "0000000000000000_0000000000000006" || !c.UpToDate || c.StreamClosed {
		t.Fatalf("control = %+v, %v", c, err)
	}
}

func TestSSEReaderSurvivesOneByteReads(t *testing.T) {
	got := readAll(t, iotest.OneByteReader(strings.NewReader(nodeStyle+nodeStyle)))
	if len(got) != 4 || got[2] != "data|hello\n" {
		t.Fatalf("one-byte reads: %q", got)
	}
}

func TestSSEReaderLineEndingsCRLFAndCR(t *testing.T) {
	in := "event: data\r\ndata:a\r\ndata:b\r\n\r\n" + "event: data\rdata:c\rdata:d\r\r\n"
	got := readAll(t, strings.NewReader(in))
	want := []string{"data|a\nb", "data|c\nd"}
	if !equalStrings(got, want) {
		t.Fatalf("events\n got %q\nwant %q", got, want)
	}
}

func TestSSEReaderStandardFieldRules(t *testing.T) {
	in := ": comment, ignored\n" +
		"event: control\n\n" + // no data line: not dispatched, and the name is reset
		"data:  two spaces keep one\nid: 7\nretry: 100\nbogus\n\n" +
		"data\n\n" // a field with no colon has an empty value
	got := readAll(t, strings.NewReader(in))
	want := []string{"message| two spaces keep one", "message|"}
	if !equalStrings(got, want) {
		t.Fatalf("events\n got %q\nwant %q", got, want)
	}
}

func TestSSEReaderLongLineAndUnterminatedTail(t *testing.T) {
	long := strings.Repeat("y", 100_000)
	in := "event: data\ndata:" + long + "\n\n" + "event: data\ndata:cut off"
	got := readAll(t, iotest.HalfReader(strings.NewReader(in)))
	if len(got) != 1 || got[0] != "data|"+long {
		t.Fatalf("got %d events (first %d bytes); want only the complete one", len(got), len(got[0]))
	}
}

func BenchmarkSSEReader(b *testing.B) {
	body := strings.Repeat("event: data\ndata:0000000042 1234567890123 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\ndata:\n\n"+
		"event: control\ndata:{\"streamNextOffset\":\"0000000000000000_0000000000001234\",\"streamCursor\":\"123\",\"upToDate\":true}\n\n", 1000)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		s := newSSEReader(strings.NewReader(body))
		for {
			if _, err := s.Next(); err != nil {
				break
			}
		}
	}
}
