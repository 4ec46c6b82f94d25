package engine

import (
	"encoding/json"
	"time"

	"github.com/dsd-project/dsd/model"
)

// streamMeta is the stored form of one stream incarnation: everything but its data,
// producers and snapshot body. It is rewritten in the same transaction as every change to
// the stream (D4). Times are Unix milliseconds.
type streamMeta struct {
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

	RetainedFrom uint64        `json:"ret,omitempty"` // offsets below answer 410 (§2.2)
	Snapshot     *snapshotMeta `json:"snap,omitempty"`
	Attrs        []byte        `json:"attrs,omitempty"` // normalized attribute object (§5)

	Fork        *forkMeta `json:"fork,omitempty"`
	Refs        int       `json:"refs,omitempty"` // forks that reference this stream (B-4.2-10)
	SoftDeleted bool      `json:"sdel,omitempty"`

	// Create request as given, for idempotent re-create comparisons.
	CreateClosed bool `json:"cclosed,omitempty"`
}

// forkMeta records what a fork inherits (B-4.2-01..03): source data strictly before Anchor,
// then its own data, whose first unit is the materialized sub-offset prefix.
type forkMeta struct {
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
	Chain []segment `json:"chain,omitempty"`
}

// snapshotMeta describes the one visible snapshot of a stream (extension §2).
type snapshotMeta struct {
	Offset      uint64 `json:"off"`
	ContentType string `json:"ct"`
	Digest      string `json:"digest"`
	Size        int64  `json:"size"`
	RecordAt    uint64 `json:"rec,omitempty"`
}

func encodeMeta(m *streamMeta) []byte {
	b, err := json.Marshal(m)
	if err != nil {
		panic("engine: encode meta: " + err.Error())
	}
	return b
}

func decodeMeta(b []byte) (*streamMeta, error) {
	m := new(streamMeta)
	if err := json.Unmarshal(b, m); err != nil {
		return nil, err
	}
	return m, nil
}

// isJSON reports whether the stream is in JSON mode (D3).
func (m *streamMeta) isJSON() bool { return model.IsJSON(m.MediaType) }

// expired reports whether the stream's lifetime has ended at now (B-5.1-04, B-5.1-06,
// access is the last GET/POST time in Unix ms.
func (m *streamMeta) expired(now time.Time, access int64) bool {
	ms := now.UnixMilli()
	if m.ExpiresMs != nil && ms >= *m.ExpiresMs {
		return true
	}
	if m.TTL != nil && ms > access+int64(*m.TTL)*1000 {
		return true
	}
	return false
}
