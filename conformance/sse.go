package conformance

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Event is one dispatched server-sent event (base protocol §5.8, WHATWG event-stream
// parsing): Type is the event field ("message" when absent), Data its data lines joined
// with "\n".
type Event struct {
	Type string
	Data string
}

// SSEParser is an incremental text/event-stream parser. Lines end at CRLF, CR or LF (also
// when the CR and LF arrive in different chunks); a field's value loses one leading
// space; data lines are joined with "\n"; comments (":") and unknown fields are ignored;
// a blank line dispatches the event if it had any data line.
type SSEParser struct {
	line    []byte
	afterCR bool
	started bool
	evType  string
	data    strings.Builder
	hasData bool
}

// Feed parses the next chunk and returns the events it completes.
func (p *SSEParser) Feed(chunk []byte) []Event {
	var out []Event
	for _, c := range chunk {
		switch c {
		case '\n':
			if p.afterCR {
				p.afterCR = false
				continue
			}
			out = p.endLine(out)
		case '\r':
			p.afterCR = true
			out = p.endLine(out)
		default:
			p.afterCR = false
			p.line = append(p.line, c)
		}
	}
	return out
}

// endLine processes the buffered line.
func (p *SSEParser) endLine(out []Event) []Event {
	line := string(p.line)
	p.line = p.line[:0]
	if !p.started { // a UTF-8 byte order mark may open the stream
		p.started = true
		line = strings.TrimPrefix(line, "\uFEFF")
	}
	if line == "" {
		if p.hasData {
			typ := p.evType
			if typ == "" {
				typ = "message"
			}
			out = append(out, Event{Type: typ, Data: strings.TrimSuffix(p.data.String(), "\n")})
		}
		p.evType, p.hasData = "", false
		p.data.Reset()
		return out
	}
	if line[0] == ':' {
		return out
	}
	field, value, _ := strings.Cut(line, ":")
	value = strings.TrimPrefix(value, " ")
	switch field {
	case "event":
		p.evType = value
	case "data":
		p.data.WriteString(value)
		p.data.WriteByte('\n')
		p.hasData = true
	}
	return out
}

// ParseSSE parses a complete event stream.
func ParseSSE(b []byte) []Event {
	var p SSEParser
	return p.Feed(b)
}

// Control is a decoded SSE control event (§5.8): camelCase fields of one JSON object.
type Control struct {
	NextOffset string
	Cursor     string
	HasCursor  bool
	UpToDate   bool
	Closed     bool
	// Fields holds every field as sent, to check presence and types.
	Fields map[string]json.RawMessage
}

// ParseControl decodes a control event's data.
func ParseControl(ev Event) (Control, error) {
	var c Control
	if ev.Type != "control" {
		return c, fmt.Errorf("event type %q is not control", ev.Type)
	}
	if err := json.Unmarshal([]byte(ev.Data), &c.Fields); err != nil {
		return c, fmt.Errorf("control data %q is not a JSON object: %w", ev.Data, err)
	}
	if raw, ok := c.Fields["streamNextOffset"]; ok {
		if err := json.Unmarshal(raw, &c.NextOffset); err != nil {
			return c, fmt.Errorf("streamNextOffset %s is not a string", raw)
		}
	}
	if raw, ok := c.Fields["streamCursor"]; ok {
		c.HasCursor = true
		if err := json.Unmarshal(raw, &c.Cursor); err != nil {
			return c, fmt.Errorf("streamCursor %s is not a string", raw)
		}
	}
	for name, dst := range map[string]*bool{"upToDate": &c.UpToDate, "streamClosed": &c.Closed} {
		if raw, ok := c.Fields[name]; ok {
			if err := json.Unmarshal(raw, dst); err != nil {
				return c, fmt.Errorf("%s %s is not a boolean", name, raw)
			}
		}
	}
	return c, nil
}
