package model

import "fmt"

// Command is one protocol request as State.Apply takes it: the resource it names, the
// request headers that the protocol defines, as sent (nil: absent), and the body. The
// commands are the HTTP requests of the bucketed surface (D1) with the URL already split
// into bucket and stream ids; the flat surface is the same requests in one bucket.
//
// The extension commands (attributes, append-batch, snapshots, retention, bootstrap)
// live in the apply_* file of their concept.
type Command interface {
	// Name is a short description for logs and failure messages.
	Name() string
}

// CreateBucket is PUT /{bucket_id}.
type CreateBucket struct{ Bucket string }

// GetBucket is GET /{bucket_id}.
type GetBucket struct{ Bucket string }

// DeleteBucket is DELETE /{bucket_id}.
type DeleteBucket struct{ Bucket string }

// CreateStream is PUT {stream} (B-5.1): Content-Type, Stream-TTL, Stream-Expires-At,
// Stream-Closed, Stream-Attrs (extension §5.2) and the fork headers Stream-Forked-From,
// Stream-Fork-Offset, Stream-Fork-Sub-Offset (B-4.2) as sent, and the initial content.
type CreateStream struct {
	Stream        StreamKey
	ContentType   *string
	TTL           *string
	ExpiresAt     *string
	Closed        *string
	Attrs         *string
	ForkedFrom    *string
	ForkOffset    *string
	ForkSubOffset *string
	Body          []byte
}

// AppendStream is POST {stream} (B-5.2, B-5.2.1, B-5.3): an append, an append-and-close,
// or a close-only request (empty body with Stream-Closed: true).
type AppendStream struct {
	Stream        StreamKey
	ContentType   *string
	Closed        *string
	ProducerID    *string
	ProducerEpoch *string
	ProducerSeq   *string
	StreamSeq     *string
	RecordMatch   *string // Stream-Record-Match (extension §6.4)
	Body          []byte
}

// ReadStream is a catch-up GET {stream}?offset=... (B-5.6), or a record-aware read with
// record=, tail_records=, max_records=, record_view= (extension §6.6-§6.8); nil means
// the parameter is absent. MaxBytes is max_bytes, which only record-aware reads judge.
// Live reads (long-poll, SSE) are not commands: what they may return is checked against
// recorded transcripts (linearizability/).
type ReadStream struct {
	Stream      StreamKey
	Offset      *string
	Record      *string
	TailRecords *string
	MaxRecords  *string
	RecordView  *string
	MaxBytes    *string
}

// HeadStream is HEAD {stream} (B-5.5).
type HeadStream struct{ Stream StreamKey }

// DeleteStream is DELETE {stream} (B-5.4).
type DeleteStream struct{ Stream StreamKey }

// Name implements Command.
func (c CreateBucket) Name() string { return "PUT /" + c.Bucket }

// Name implements Command.
func (c GetBucket) Name() string { return "GET /" + c.Bucket }

// Name implements Command.
func (c DeleteBucket) Name() string { return "DELETE /" + c.Bucket }

// Name implements Command.
func (c CreateStream) Name() string {
	out := fmt.Sprintf("PUT /%s ct=%s ttl=%s exp=%s closed=%s", c.Stream, show(c.ContentType),
		show(c.TTL), show(c.ExpiresAt), show(c.Closed))
	if c.Attrs != nil {
		out += fmt.Sprintf(" attrs=%q", clip([]byte(*c.Attrs)))
	}
	if c.ForkedFrom != nil || c.ForkOffset != nil || c.ForkSubOffset != nil {
		out += fmt.Sprintf(" fork=(%s,%s,%s)", show(c.ForkedFrom), show(c.ForkOffset), show(c.ForkSubOffset))
	}
	return out + fmt.Sprintf(" body=%q", clip(c.Body))
}

// Name implements Command.
func (c AppendStream) Name() string {
	out := fmt.Sprintf("POST /%s ct=%s closed=%s producer=(%s,%s,%s) seq=%s", c.Stream,
		show(c.ContentType), show(c.Closed), show(c.ProducerID), show(c.ProducerEpoch),
		show(c.ProducerSeq), show(c.StreamSeq))
	if c.RecordMatch != nil {
		out += " record-match=" + show(c.RecordMatch)
	}
	return out + fmt.Sprintf(" body=%q", clip(c.Body))
}

// Name implements Command.
func (c ReadStream) Name() string {
	out := fmt.Sprintf("GET /%s offset=%s", c.Stream, show(c.Offset))
	for _, p := range []struct {
		name string
		v    *string
	}{{"record", c.Record}, {"tail_records", c.TailRecords}, {"max_records", c.MaxRecords},
		{"record_view", c.RecordView}, {"max_bytes", c.MaxBytes}} {
		if p.v != nil {
			out += " " + p.name + "=" + show(p.v)
		}
	}
	return out
}

// Name implements Command.
func (c HeadStream) Name() string { return "HEAD /" + c.Stream.String() }

// Name implements Command.
func (c DeleteStream) Name() string { return "DELETE /" + c.Stream.String() }

// Str returns a pointer to s: a header that is present with value s.
func Str(s string) *string { return &s }

func show(p *string) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%q", *p)
}

func clip(b []byte) []byte {
	if len(b) > 40 {
		return append(b[:37:37], "..."...)
	}
	return b
}
