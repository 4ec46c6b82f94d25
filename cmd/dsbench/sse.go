package main

import (
	"bytes"
	"encoding/json"
	"io"
)

// sseEvent is one dispatched server-sent event. Data is the event's data lines joined with
// "\n"; it aliases the parser's buffer and is valid until the next call to Next.
type sseEvent struct {
	Name string // "data", "control", ... ("message" when the event had no event: field)
	Data []byte
}

// sseParser parses a text/event-stream body incrementally (WHATWG HTML "server-sent events"
// framing, as the protocol's §5.8 uses it): bytes go in as they arrive, split anywhere. Lines
// end in LF, CRLF or CR; a blank line dispatches the event; "event:" names it; "data:" lines
// are joined with "\n"; one space after the colon is dropped; comment lines (":...") and
// unknown fields are ignored; an event with no data line is not dispatched. The zero value is
// ready to use.
type sseParser struct {
	line   []byte // start of a line that an earlier call did not end
	name   []byte
	data   []byte
	has    bool // at least one data: line in the current event
	skipLF bool // the last line ended in CR: a LF right after it belongs to it
}

// Next parses p up to the end of the next event and returns it with the number of bytes of p
// it consumed. When p ends before an event does, ok is false and all of p is consumed: the
// partial line and event are kept for the next call.
func (s *sseParser) Next(p []byte) (ev sseEvent, n int, ok bool) {
	for n < len(p) {
		if s.skipLF {
			s.skipLF = false
			if p[n] == '\n' {
				n++
				continue
			}
		}
		rest := p[n:]
		end := bytes.IndexByte(rest, '\n')
		seg := rest
		if end >= 0 {
			seg = rest[:end]
		}
		if cr := bytes.IndexByte(seg, '\r'); cr >= 0 {
			end, seg, s.skipLF = cr, rest[:cr], true
		}
		if end < 0 {
			s.line = append(s.line, rest...)
			return sseEvent{}, len(p), false
		}
		n += end + 1
		line := seg
		if len(s.line) > 0 {
			s.line = append(s.line, seg...)
			line = s.line
		}
		ev, ok = s.endLine(line)
		s.line = s.line[:0]
		if ok {
			return ev, n, true
		}
	}
	return sseEvent{}, n, false
}

// endLine applies one complete line; a blank one dispatches the event built so far.
func (s *sseParser) endLine(line []byte) (sseEvent, bool) {
	if len(line) > 0 {
		s.field(line)
		return sseEvent{}, false
	}
	if !s.has {
		s.name = s.name[:0]
		return sseEvent{}, false
	}
	ev := sseEvent{Name: eventName(s.name), Data: s.data}
	s.name, s.data, s.has = s.name[:0], s.data[:0], false
	return ev, true
}

// eventName returns the event type, without allocating for the protocol's two names.
func eventName(b []byte) string {
	switch string(b) { // no allocation: the compiler compares in place
	case "":
		return "message"
	case "data":
		return "data"
	case "control":
		return "control"
	}
	return string(b)
}

// field applies one non-blank line to the event being built.
func (s *sseParser) field(line []byte) {
	if line[0] == ':' {
		return
	}
	name, value, found := bytes.Cut(line, []byte{':'})
	if found && len(value) > 0 && value[0] == ' ' {
		value = value[1:]
	}
	switch string(name) {
	case "event":
		s.name = append(s.name[:0], value...)
	case "data":
		if s.has {
			s.data = append(s.data, '\n')
		}
		s.data = append(s.data, value...)
		s.has = true
	}
}

// sseReader reads events from a text/event-stream body with an sseParser.
type sseReader struct {
	r      io.Reader
	buf    []byte
	p      []byte // read, not yet parsed
	err    error  // the reader's error, returned once p is parsed
	parser sseParser
}

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{r: r, buf: make([]byte, 16<<10)}
}

// Next returns the next event, or the body's error (io.EOF at its end) once every complete
// event before it was returned; an unterminated event is dropped, as the standard says.
func (s *sseReader) Next() (sseEvent, error) {
	for {
		if len(s.p) > 0 {
			ev, n, ok := s.parser.Next(s.p)
			s.p = s.p[n:]
			if ok {
				return ev, nil
			}
		}
		if s.err != nil {
			return sseEvent{}, s.err
		}
		n, err := s.r.Read(s.buf)
		s.p, s.err = s.buf[:n], err
	}
}

// sseControl is the JSON body of an `event: control` (§5.8).
type sseControl struct {
	StreamNextOffset string `json:"streamNextOffset"`
	StreamCursor     string `json:"streamCursor"`
	UpToDate         bool   `json:"upToDate"`
	StreamClosed     bool   `json:"streamClosed"`
}

// parseControl decodes a control event's data.
func parseControl(data []byte) (sseControl, error) {
	var c sseControl
	err := json.Unmarshal(data, &c)
	return c, err
}
