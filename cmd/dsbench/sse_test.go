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

// parseSplit runs an sseParser over in, split after each offset of cuts, and returns the
// events as "name|data" strings.
func parseSplit(in string, cuts ...int) []string {
	var p sseParser
	var out []string
	feed := func(b []byte) {
		for len(b) > 0 {
			ev, n, ok := p.Next(b)
			b = b[n:]
			if !ok {
				break
			}
			out = append(out, ev.Name+"|"+string(ev.Data))
		}
	}
	last := 0
	for _, c := range cuts {
		feed([]byte(in[last:c]))
		last = c
	}
	feed([]byte(in[last:]))
	return out
}

// sseSplitInputs are framings the parser must give the same events for however they are cut:
// a server's, every line ending, comments and fields without a value.
var sseSplitInputs = map[string]struct {
	in   string
	want []string
}{
	"protocol": {nodeStyle, []string{"data|hello\n", `control|{"streamNextOffset":"0000000000000000_0000000000000006","upToDate":true}`}},
	"crlf":     {"event: data\r\ndata:a\r\ndata:b\r\n\r\n", []string{"data|a\nb"}},
	"cr":       {"event: data\rdata:c\rdata:d\r\r", []string{"data|c\nd"}},
	"mixed":    {"data:a\r\n\rdata:b\n\r\n: c\r\ndata\rdata: e\r\n\n", []string{"message|a", "message|b", "message|\ne"}},
	"fields":   {": comment\nevent: control\n\nid: 7\ndata:  x\nretry: 1\n\n", []string{"message| x"}},
}

func TestSSEParserSameEventsAtEverySplit(t *testing.T) {
	for name, tc := range sseSplitInputs {
		if got := parseSplit(tc.in); !equalStrings(got, tc.want) {
			t.Fatalf("%s whole: got %q want %q", name, got, tc.want)
		}
		for i := 0; i <= len(tc.in); i++ {
			for j := i; j <= len(tc.in); j++ {
				if got := parseSplit(tc.in, i, j); !equalStrings(got, tc.want) {
					t.Fatalf("%s cut at %d and %d: got %q want %q", name, i, j, got, tc.want)
				}
			}
		}
		cuts := make([]int, len(tc.in))
		for i := range cuts {
			cuts[i] = i
		}
		if got := parseSplit(tc.in, cuts...); !equalStrings(got, tc.want) {
			t.Fatalf("%s byte by byte: got %q want %q", name, got, tc.want)
		}
	}
}

// A lone CR ends its line at once: the event it completes is dispatched before the next
// byte arrives (a receiver cannot tell whether an LF will follow).
func TestSSEParserDispatchesAtLoneCR(t *testing.T) {
	var p sseParser
	in := []byte("data:x\r\r")
	ev, n, ok := p.Next(in)
	if !ok || n != len(in) || string(ev.Data) != "x" {
		t.Fatalf("Next = %q, %d, %v", ev.Data, n, ok)
	}
	if _, n, ok := p.Next([]byte("\ndata:y\n")); ok || n != 8 {
		t.Fatalf("the LF of the CRLF and a partial event: n=%d ok=%v", n, ok)
	}
	if ev, _, ok := p.Next([]byte("\n")); !ok || string(ev.Data) != "y" {
		t.Fatalf("after the LF: %q %v", ev.Data, ok)
	}
}

func BenchmarkSSEParser(b *testing.B) {
	ev := []byte("event: data\ndata:0000000042 1234567890123 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\ndata:\n\n" +
		"event: control\ndata:{\"streamNextOffset\":\"0000000000000000_0000000000001234\",\"streamCursor\":\"123\",\"upToDate\":true}\n\n")
	b.SetBytes(int64(len(ev)))
	var p sseParser
	for b.Loop() {
		for in := ev; len(in) > 0; {
			_, n, _ := p.Next(in)
			in = in[n:]
		}
	}
}
