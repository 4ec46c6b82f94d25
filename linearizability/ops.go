package linearizability

import "fmt"

// Kind names an operation of the porcupine model.
type Kind string

// The operations (STYLE.md "The porcupine model for a stream").
const (
	// OpCreate is PUT {stream} with the workload's fixed configuration
	// (application/octet-stream, no TTL, open): 201, 200 or 409.
	OpCreate Kind = "create"
	// OpAppend is POST {stream}: a unique body (possibly empty for a close-only), an
	// optional producer triple, an optional Stream-Seq and the close flag.
	OpAppend Kind = "append"
	// OpRead reads from -1 up to the tail, following Stream-Next-Offset across chunks;
	// its output is the content summarized as (length, digest), the tail's offset and
	// whether the stream is closed.
	OpRead Kind = "read"
	// OpHead is HEAD {stream}: the tail's offset and closure.
	OpHead Kind = "head"
)

// Producer is an idempotent producer triple (B-5.2.1).
type Producer struct {
	ID    string `json:"id"`
	Epoch uint64 `json:"epoch"`
	Seq   uint64 `json:"seq"`
}

func (p Producer) String() string { return fmt.Sprintf("(%s,%d,%d)", p.ID, p.Epoch, p.Seq) }

// Input is an operation's request. Stream is the partition key.
type Input struct {
	Kind      Kind      `json:"kind"`
	Stream    string    `json:"stream"`
	Body      string    `json:"body,omitempty"` // append: unique per request (request id)
	Producer  *Producer `json:"producer,omitempty"`
	StreamSeq string    `json:"stream_seq,omitempty"` // "" = no Stream-Seq header
	Close     bool      `json:"close,omitempty"`      // Stream-Closed: true
	// Frame is the 1-based index of an append-batch frame (extension §4): each frame is
	// its own append, recorded as its own operation; 0 for a plain POST.
	Frame int `json:"frame,omitempty"`

	digest Digest // of Body, filled by prepare
}

// prepare fills derived fields (the body digest).
func (in *Input) prepare() { in.digest = DigestOf([]byte(in.Body)) }

// Output is what the client observed. Status 0 means the outcome is unknown (a timeout,
// a broken connection, a 5xx): the write may or may not have happened.
type Output struct {
	Status   int     `json:"status"`
	Offset   string  `json:"offset,omitempty"`   // Stream-Next-Offset, an opaque token
	Closed   bool    `json:"closed,omitempty"`   // Stream-Closed: true
	Len      uint64  `json:"len,omitempty"`      // read: content length
	Digest   Digest  `json:"digest,omitempty"`   // read: content digest
	Epoch    *uint64 `json:"epoch,omitempty"`    // Producer-Epoch
	Seq      *uint64 `json:"seq,omitempty"`      // Producer-Seq
	Expected *uint64 `json:"expected,omitempty"` // Producer-Expected-Seq
	Received *uint64 `json:"received,omitempty"` // Producer-Received-Seq
	Error    string  `json:"error,omitempty"`    // why the outcome is unknown
}

// Unknown reports whether the operation's outcome is indeterminate.
func (o Output) Unknown() bool { return o.Status == 0 }

// IsWrite reports whether the operation can change the stream.
func (in Input) IsWrite() bool { return in.Kind == OpCreate || in.Kind == OpAppend }

func u64p(v uint64) *uint64 { return &v }

func (in Input) String() string {
	switch in.Kind {
	case OpAppend:
		s := "append"
		if in.Body == "" {
			s = "close"
		} else {
			s += fmt.Sprintf(" %q", clipBody(in.Body))
		}
		if in.Producer != nil {
			s += " p=" + in.Producer.String()
		}
		if in.StreamSeq != "" {
			s += " seq=" + in.StreamSeq
		}
		if in.Close && in.Body != "" {
			s += " +close"
		}
		if in.Frame > 0 {
			s += fmt.Sprintf(" (batch frame %d)", in.Frame)
		}
		return s
	}
	return string(in.Kind)
}

func (o Output) String() string {
	if o.Unknown() {
		return "unknown (" + o.Error + ")"
	}
	s := fmt.Sprintf("%d", o.Status)
	if o.Offset != "" {
		s += " @" + shortToken(o.Offset)
	}
	if o.Len != 0 || o.Digest != 0 {
		s += fmt.Sprintf(" len=%d d=%x", o.Len, uint64(o.Digest)&0xffffff)
	}
	if o.Closed {
		s += " closed"
	}
	if o.Seq != nil {
		s += fmt.Sprintf(" pseq=%d", *o.Seq)
	}
	if o.Expected != nil {
		s += fmt.Sprintf(" expected=%d", *o.Expected)
	}
	return s
}

func clipBody(s string) string {
	if len(s) > 14 {
		return s[:14] + "…"
	}
	return s
}

// shortToken shortens dsd-style tokens for display: the last 8 characters.
func shortToken(t string) string {
	if len(t) > 10 {
		return "…" + t[len(t)-8:]
	}
	return t
}
