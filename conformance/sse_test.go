package conformance

import (
	"reflect"
	"strings"
	"testing"
)

func TestSSEParser(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want []Event
	}{
		{"lf", "event: data\ndata:hello\n\n", []Event{{"data", "hello"}}},
		{"crlf", "event: data\r\ndata:a\r\ndata:b\r\n\r\n", []Event{{"data", "a\nb"}}},
		{"cr", "event: control\rdata:{}\r\r", []Event{{"control", "{}"}}},
		{"one leading space stripped", "data:  two\n\n", []Event{{"message", " two"}}},
		{"empty data line dispatches", "event: data\ndata:\n\n", []Event{{"data", ""}}},
		{"no data no event", "event: data\n\n", nil},
		{"comment ignored", ": keep-alive\n\nevent: x\ndata:y\n\n", []Event{{"x", "y"}}},
		{"field without colon", "data\n\n", []Event{{"message", ""}}},
		{"unknown field ignored", "id: 7\nretry: 10\nfoo: bar\ndata:z\n\n", []Event{{"message", "z"}}},
		{"bom", "\uFEFFdata:x\n\n", []Event{{"message", "x"}}},
		{"incomplete event dropped", "data:x\n", nil},
		{"two events", "event: data\ndata:1\n\nevent: control\ndata:{\"a\":1}\n\n", []Event{{"data", "1"}, {"control", `{"a":1}`}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ParseSSE([]byte(c.in)); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("ParseSSE(%q) = %#v, want %#v", c.in, got, c.want)
			}
		})
	}
}

func TestParseControl(t *testing.T) {
	c, err := ParseControl(Event{Type: "control", Data: `{"streamNextOffset":"o1","streamCursor":"12","upToDate":true}`})
	if err != nil || c.NextOffset != "o1" || !c.HasCursor || c.Cursor != "12" || !c.UpToDate || c.Closed {
		t.Fatalf("ParseControl = %+v, %v", c, err)
	}
	for _, bad := range []string{`not json`, `{"streamNextOffset":5}`, `{"upToDate":"yes"}`, `{"streamCursor":12}`} {
		if _, err := ParseControl(Event{Type: "control", Data: bad}); err == nil {
			t.Errorf("ParseControl(%s): no error", bad)
		}
	}
	if _, err := ParseControl(Event{Type: "data", Data: `{}`}); err == nil {
		t.Error("ParseControl accepted a data event")
	}
}

// encodeSSE frames events the way a careful server does: each data line gets "data:",
// plus a space when the line itself starts with one.
func encodeSSE(evs []Event, nl string) string {
	var b strings.Builder
	for _, e := range evs {
		b.WriteString("event: " + e.Type + nl)
		for _, line := range strings.Split(e.Data, "\n") {
			if strings.HasPrefix(line, " ") {
				b.WriteString("data: " + line + nl)
			} else {
				b.WriteString("data:" + line + nl)
			}
		}
		b.WriteString(nl)
	}
	return b.String()
}

// FuzzSSEParser checks two properties: feeding a stream in two chunks, split anywhere,
// yields the same events as feeding it whole (CR and LF may arrive apart); and events
// framed by encodeSSE parse back to themselves for every line ending.
func FuzzSSEParser(f *testing.F) {
	f.Add([]byte("event: data\r\ndata:a\r\n\r\n"), uint(13), "payload")
	f.Add([]byte("data:x\r"), uint(6), " leading\n  two")
	f.Add([]byte(": c\n\ndata\n\n"), uint(0), "")
	f.Add([]byte("\uFEFFevent: control\rdata:{}\r\r"), uint(3), "a\nb\n")
	f.Fuzz(func(t *testing.T, raw []byte, split uint, data string) {
		whole := ParseSSE(raw)
		k := int(split % uint(len(raw)+1))
		var p SSEParser
		chunked := append(p.Feed(raw[:k]), p.Feed(raw[k:])...)
		if !reflect.DeepEqual(whole, chunked) {
			t.Fatalf("split at %d: whole %#v, chunked %#v", k, whole, chunked)
		}

		if strings.ContainsAny(data, "\r") {
			return // CR is a line break in SSE: text payloads cannot carry it
		}
		evs := []Event{{Type: "data", Data: data}, {Type: "control", Data: `{"upToDate":true}`}}
		for _, nl := range []string{"\n", "\r\n", "\r"} {
			enc := encodeSSE(evs, nl)
			if got := ParseSSE([]byte(enc)); !reflect.DeepEqual(got, evs) {
				t.Fatalf("newline %q: %q parsed as %#v, want %#v", nl, enc, got, evs)
			}
		}
	})
}
