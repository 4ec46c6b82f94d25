package storage

import "github.com/dsd-project/dsd/model"

// Meta is the stored form of one stream incarnation: everything but its data, producers
// and snapshot body. The engine rewrites it in the same commit as every change to the
// stream that it does not derive on load (D4). Times are Unix milliseconds. The JSON
// names are boltstore's on-disk encoding (format dsd-2): never rename them.
type Meta struct {
	ID          uint64 `json:"id"`
	Bucket      string `json:"bucket"`
	Stream      string `json:"stream"`
	ContentType string `json:"ct"`  // as given at creation, echoed unchanged
	MediaType   string `json:"mt"`  // normalized
	CreatedMs   int64  `json:"cms"` //
	LastWriteMs int64  `json:"lwms"`
	AccessMs    int64  `json:"ams"` // last GET/POST (sliding TTL)

	TTL       *uint64 `json:"ttl,omitempty"` // seconds
	ExpiresMs *int64  `json:"exp,omitempty"` // absolute expiry

	Tail      uint64          `json:"tail"`
	Closed    bool            `json:"closed,omitempty"`
	Closer    *model.Producer `json:"closer,omitempty"` // the tuple that closed it (B-5.2.1-09)
	StreamSeq *string         `json:"sseq,omitempty"`   // last Stream-Seq

	RecordFirst uint64 `json:"rf,omitempty"` // F (extension §6.1), JSON streams
	RecordNext  uint64 `json:"rn,omitempty"` // N

	RetainedFrom uint64    `json:"ret,omitempty"` // offsets below answer 410 (§2.2)
	Snapshot     *Snapshot `json:"snap,omitempty"`
	Attrs        []byte    `json:"attrs,omitempty"` // normalized attribute object (§5)

	Fork        *Fork `json:"fork,omitempty"`
	Refs        int   `json:"refs,omitempty"` // forks that reference this stream (B-4.2-10)
	SoftDeleted bool  `json:"sdel,omitempty"`

	// Create request as given, for idempotent re-create comparisons.
	CreateClosed bool `json:"cclosed,omitempty"`
}

// Key is the name the incarnation is bound to: "{bucket}/{stream}".
func (m *Meta) Key() string { return model.StreamKey{Bucket: m.Bucket, Stream: m.Stream}.String() }

// Fork records what a fork inherits (B-4.2-01..03): source data strictly before Anchor,
// then its own data, whose first unit is the materialized sub-offset prefix.
type Fork struct {
	SourceID     uint64  `json:"src"`
	SourcePath   string  `json:"srcpath"` // Stream-Forked-From as requested
	Anchor       uint64  `json:"anchor"`  // inherited range is [0, Anchor) of the source
	ReqOffset    *string `json:"reqoff,omitempty"`
	SubOffset    uint64  `json:"sub,omitempty"`
	ReqTTL       *uint64 `json:"rttl,omitempty"`
	ReqExpiresMs *int64  `json:"rexp,omitempty"`
	ReqCT        string  `json:"rct,omitempty"`
	// InheritedRecords is the number of source records before Anchor (JSON streams).
	InheritedRecords uint64 `json:"irec,omitempty"`
	// Chain is the inherited data: the source's visible segments cut at Anchor.
	Chain []Segment `json:"chain,omitempty"`
}

// Snapshot describes the one visible snapshot of a stream (extension §2).
type Snapshot struct {
	Offset      uint64 `json:"off"`
	ContentType string `json:"ct"`
	Digest      string `json:"digest"`
	Size        int64  `json:"size"`
	RecordAt    uint64 `json:"rec,omitempty"`
}

// Segment is a range of a stream's visible offsets whose messages are stored under one
// incarnation's sid: a plain stream has one; a fork has its inherited segments (owned by
// its sources, B-4.2-01) followed by its own.
type Segment struct {
	SID     uint64 `json:"sid"`
	From    uint64 `json:"from"`    // first offset
	To      uint64 `json:"to"`      // end offset (exclusive); the own segment ends at the tail
	RecFrom uint64 `json:"recfrom"` // ordinal of the first record (JSON streams)
}

// ProducerState is the stored state of one idempotent producer of a stream
// (B-5.2.1-03): its epoch, the highest accepted seq, and the acknowledgements of its most
// recent accepted appends.
type ProducerState struct {
	Epoch    uint64    `json:"epoch"`
	LastSeq  uint64    `json:"seq"`
	Receipts []Receipt `json:"receipts,omitempty"`
}

// Receipt is the acknowledgement of one accepted producer append: the Stream-Next-Offset
// it was acknowledged with and, on JSON streams, its record range.
type Receipt struct {
	Seq      uint64 `json:"seq"`
	End      uint64 `json:"end"`
	RecStart uint64 `json:"rs,omitempty"`
	RecNext  uint64 `json:"rn,omitempty"`
}

// BucketRecord is the stored form of a bucket (extension §1).
type BucketRecord struct {
	CreatedMs int64 `json:"cms"`
	Streams   int   `json:"streams"` // paths bound in the bucket (soft-deleted ones too)
}

// FlagUnitEnd marks the last message of one append unit (one POST or PUT body) in a
// message's flags byte.
const FlagUnitEnd byte = 1 << 0

// Message is one stored message: Off is its offset, Val its flags byte followed by its
// canonical bytes (D3).
type Message struct {
	Off uint64
	Val []byte
}

// Limits bound one scan of messages: about Bytes (at least one message), at most Msgs
// messages (0 = no limit).
type Limits struct{ Bytes, Msgs int }

// Allows reports whether a message of n bytes may follow taken messages of size bytes.
func (l Limits) Allows(taken, size, n int) bool {
	if taken == 0 {
		return true
	}
	return size+n <= l.Bytes && (l.Msgs == 0 || taken < l.Msgs)
}

// One is the limit of a single message.
var One = Limits{Msgs: 1}

// Data returns the message's canonical bytes.
func (m Message) Data() []byte { return m.Val[1:] }

// Flags returns the message's flags byte.
func (m Message) Flags() byte { return m.Val[0] }

// Size returns the number of canonical bytes.
func (m Message) Size() uint64 { return uint64(len(m.Val) - 1) }
