package linearizability

import (
	"fmt"

	"github.com/dsd-project/dsd/model"
)

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
	// OpBatch is POST {stream}/append-batch (extension §4): one unique body per frame, one
	// acknowledgement per frame (Output.Acks).
	OpBatch Kind = "batch"
	// OpHead is HEAD {stream}: the tail's offset and closure (and the visible snapshot's
	// offset, extension §2.4).
	OpHead Kind = "head"
	// OpSnapshot publishes a snapshot (extension §2.2) at Input.Offset with the blob
	// Input.Body: 204 with Stream-Snapshot-Offset and -Digest, or 409.
	OpSnapshot Kind = "snapshot"
	// OpRetain moves the retention boundary to Input.Offset (extension §2.2): 204 with
	// the tail, or 409.
	OpRetain Kind = "retain"
	// OpSnapRead reads the visible snapshot (GET {stream}/snapshot, following its 307):
	// its offset and the digest of its blob, or 404.
	OpSnapRead Kind = "snapread"
	// OpBootstrap is GET {stream}/bootstrap (extension §3): the snapshot part's digest,
	// the update parts summarized as (length, digest), the tail's offset and closure.
	OpBootstrap Kind = "bootstrap"
	// OpRecordRead is a record-aware read of a JSON stream (extension §6.6, §6.7): F, the
	// range read, the records' canonical bytes as (length, digest, count), the tail.
	OpRecordRead Kind = "recordread"
	// OpFork is PUT {stream} with Stream-Forked-From: Input.Source and
	// Stream-Fork-Offset: Input.Offset (B-4.2), whose inherited content the client read
	// from the source just before (Input.InhLen, Input.InhDigest): 201, 200 or 409.
	OpFork Kind = "fork"
	// OpDelete is DELETE {stream} (B-5.4-01); Input.Forked says a fork references the
	// stream, so it is soft-deleted (B-4.2-10).
	OpDelete Kind = "delete"
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
	// Frames are the bodies of an append-batch request (extension §4), each unique.
	Frames []string `json:"frames,omitempty"`
	// Offset is the offset token a snapshot or retention request names.
	Offset string `json:"offset,omitempty"`
	// RecordMatch is Stream-Record-Match (extension §6.4), on JSON streams.
	RecordMatch *uint64 `json:"record_match,omitempty"`
	// Record selects a record-aware read (OpRecordRead): "tail" reads every retained
	// record (tail_records larger than N), "now" the empty read at N (extension §6.6).
	Record string `json:"record,omitempty"`
	// Fork requests (OpFork): the source stream, and the length and digest of its content
	// before Offset as the client read it.
	Source    string `json:"source,omitempty"`
	InhLen    uint64 `json:"inh_len,omitempty"`
	InhDigest Digest `json:"inh_digest,omitempty"`
	// Forked marks a delete of a stream that a fork references (OpDelete).
	Forked bool `json:"forked,omitempty"`

	// Derived by prepare: the body's canonical bytes (D3: on a JSON stream each
	// flattened message as compact JSON and "\n") as digest and size, and its message
	// count (its records on a JSON stream, extension §6.1).
	digest Digest
	size   uint64
	msgs   uint64
}

// prepare fills the derived fields.
func (in *Input) prepare() {
	body := []byte(in.Body)
	in.msgs = 1
	if isJSONStream(in.Stream) && len(body) > 0 {
		if flat, err := model.FlattenJSON(body, false); err == nil {
			body, in.msgs = model.CanonicalJSON(flat), uint64(len(flat))
		}
	}
	if len(body) == 0 {
		in.msgs = 0
	}
	in.digest, in.size = DigestOf(body), uint64(len(body))
}

// frame is the i-th frame of a batch as the append it is (extension §4: each frame is
// an independent logical append, without producer, Stream-Seq or close).
func (in Input) frame(i int) Input {
	f := Input{Kind: OpAppend, Stream: in.Stream, Body: in.Frames[i]}
	f.prepare()
	return f
}

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
	// Retained is the Stream-Next-Offset of the 410 a read from -1 got once retention had
	// advanced (D2), where the read then resumed; "" when -1 was served at once.
	Retained string `json:"retained,omitempty"`

	// SnapOffset is Stream-Snapshot-Offset ("-1" on a bootstrap without snapshot; ""
	// absent), SnapDigest is Stream-Snapshot-Digest (extension §2.4, D5).
	SnapOffset string `json:"snap_offset,omitempty"`
	SnapDigest string `json:"snap_digest,omitempty"`
	// Blob is the D5 digest the client computed over a snapshot blob it received (the
	// snapshot read's body, bootstrap's first part) and its Content-Type.
	Blob string `json:"blob,omitempty"`
	// Acks are the frame acknowledgements of a 200 append-batch response.
	Acks []Ack `json:"acks,omitempty"`

	// Record coordinates of a JSON stream (extension §6): Stream-Record-First, -Start and
	// -Next; Msgs is the number of messages a read returned.
	RecFirst *uint64 `json:"rec_first,omitempty"`
	RecStart *uint64 `json:"rec_start,omitempty"`
	RecNext  *uint64 `json:"rec_next,omitempty"`
	Msgs     uint64  `json:"msgs,omitempty"`
}

// Ack is one frame's acknowledgement (extension §4.3): its status,
// stream_next_offset and stream_closed.
type Ack struct {
	Status   int     `json:"status"`
	Offset   string  `json:"offset,omitempty"`
	Closed   bool    `json:"closed,omitempty"`
	RecStart *uint64 `json:"rec_start,omitempty"`
	RecNext  *uint64 `json:"rec_next,omitempty"`
}

// output is the acknowledgement as the output of the frame's append.
func (a Ack) output() Output {
	return Output{Status: a.Status, Offset: a.Offset, Closed: a.Closed, RecStart: a.RecStart, RecNext: a.RecNext}
}

// Unknown reports whether the operation's outcome is indeterminate.
func (o Output) Unknown() bool { return o.Status == 0 }

// IsWrite reports whether the operation can change the stream.
func (in Input) IsWrite() bool {
	switch in.Kind {
	case OpCreate, OpAppend, OpBatch, OpSnapshot, OpRetain, OpFork, OpDelete:
		return true
	}
	return false
}

func u64p(v uint64) *uint64 { return &v }

func (in Input) String() string {
	switch in.Kind {
	case OpSnapshot:
		return fmt.Sprintf("snapshot @%s %q", shortToken(in.Offset), clipBody(in.Body))
	case OpRetain:
		return "retain @" + shortToken(in.Offset)
	case OpFork:
		return fmt.Sprintf("fork of %s @%s (inherits len=%d)", in.Source, shortToken(in.Offset), in.InhLen)
	case OpDelete:
		if in.Forked {
			return "delete (forked)"
		}
		return "delete"
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
		if in.RecordMatch != nil {
			s += fmt.Sprintf(" record-match=%d", *in.RecordMatch)
		}
		return s
	case OpBatch:
		s := "batch"
		for _, f := range in.Frames {
			s += fmt.Sprintf(" %q", clipBody(f))
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
	if o.SnapOffset != "" {
		s += " snap@" + shortToken(o.SnapOffset)
	}
	if o.Blob != "" {
		s += " blob=" + shortDigest(o.Blob)
	}
	if o.RecFirst != nil || o.RecStart != nil || o.RecNext != nil {
		s += fmt.Sprintf(" records=%s/%s..%s", optStr(o.RecFirst), optStr(o.RecStart), optStr(o.RecNext))
	}
	for _, a := range o.Acks {
		s += fmt.Sprintf(" [%d @%s]", a.Status, shortToken(a.Offset))
		if a.Closed {
			s += " closed"
		}
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

// shortDigest shortens a D5 digest for display.
func shortDigest(d string) string {
	if len(d) > 15 {
		return d[7:15]
	}
	return d
}

func optStr(p *uint64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}
