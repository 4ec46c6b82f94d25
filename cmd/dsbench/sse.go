package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// sseEvent is one dispatched server-sent event. Data is the event's data lines joined with
// "\n"; it aliases the reader's buffer and is valid until the next call to Next.
type sseEvent struct {
	Name string // "data", "control", ... ("message" when the event had no event: field)
	Data []byte
}

// sseReader parses a text/event-stream body (WHATWG HTML "server-sent events" framing, as the
// protocol's §5.8 uses it): lines end in LF, CRLF or CR; a blank line dispatches the event;
// "event:" names it; "data:" lines are joined with "\n"; one space after the colon is
// dropped; comment lines (":...") and unknown fields are ignored; an event with no data line
// is not dispatched. A line ended by a lone CR is seen only once a later LF arrives.
type sseReader struct {
	r    *bufio.Reader
	line []byte // current line when it exceeds the bufio buffer
	name []byte
	data []byte
	has  bool // at least one data: line in the current event
	rest []byte
}

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 16<<10)}
}

// Next returns the next event, or io.EOF when the body ends (an unterminated event is dropped,
// as the standard says).
func (s *sseReader) Next() (sseEvent, error) {
	for {
		line, err := s.nextLine()
		if err != nil {
			return sseEvent{}, err
		}
		if len(line) == 0 {
			if !s.has {
				s.name = s.name[:0]
				continue
			}
			ev := sseEvent{Name: eventName(s.name), Data: s.data}
			s.name, s.data, s.has = s.name[:0], s.data[:0], false
			return ev, nil
		}
		s.field(line)
	}
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
func (s *sseReader) field(line []byte) {
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

// nextLine returns the next line without its terminator. Bytes after a lone CR inside what
// bufio returned are kept in s.rest for the following calls.
func (s *sseReader) nextLine() ([]byte, error) {
	if s.rest != nil {
		return s.takeLine(), nil
	}
	s.line = s.line[:0]
	for {
		chunk, err := s.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			s.line = append(s.line, chunk...)
			continue
		}
		if err != nil {
			if len(s.line)+len(chunk) > 0 && err == io.EOF {
				// Trailing bytes without LF: still parse any CR-terminated lines in them.
				s.line = append(s.line, chunk...)
				if bytes.IndexByte(s.line, '\r') >= 0 {
					s.rest = s.line
					return s.takeLine(), nil
				}
			}
			return nil, err
		}
		if len(s.line) > 0 {
			s.line = append(s.line, chunk...)
			chunk = s.line
		}
		chunk = chunk[:len(chunk)-1] // drop LF
		if n := len(chunk); n > 0 && chunk[n-1] == '\r' {
			chunk = chunk[:n-1] // CRLF
		}
		if bytes.IndexByte(chunk, '\r') < 0 {
			return chunk, nil
		}
		// Lone CRs end lines too: keep a copy (the buffer moves on) and serve it piecewise.
		s.rest = append([]byte(nil), chunk...)
		s.rest = append(s.rest, '\r')
		return s.takeLine(), nil
	}
}

// takeLine pops the next CR-terminated line from s.rest.
func (s *sseReader) takeLine() []byte {
	i := bytes.IndexByte(s.rest, '\r')
	if i < 0 {
		line := s.rest
		s.rest = nil
		return line
	}
	line := s.rest[:i]
	s.rest = s.rest[i+1:]
	if len(s.rest) == 0 {
		s.rest = nil
	}
	return line
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
