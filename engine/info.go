package engine

import (
	"time"

	"github.com/dsd-project/dsd/model"
)

// StreamInfo is a stream's metadata as the protocol exposes it (HEAD, B-5.5-02; create and
// append responses; extension headers).
type StreamInfo struct {
	ID           uint64 // incarnation id: new on every (re)creation
	ContentType  string // as given at creation
	MediaType    string // normalized
	Tail         model.Offset
	Closed       bool
	TTL          *uint64    // seconds
	ExpiresAt    *time.Time // absolute expiry
	RetainedFrom model.Offset
	RecordFirst  uint64 // F (extension §6.1); JSON streams only
	RecordNext   uint64 // N
	Snapshot     *SnapshotInfo
	CreatedMs    int64
	LastWriteMs  int64
}

// JSON reports whether the stream is in JSON mode (D3).
func (i StreamInfo) JSON() bool { return model.IsJSON(i.MediaType) }

// SnapshotInfo describes a stream's visible snapshot (extension §2).
type SnapshotInfo struct {
	Offset      model.Offset
	ContentType string
	Digest      string
	Size        int64
}

func (m *streamMeta) info() StreamInfo {
	i := StreamInfo{
		ID: m.ID, ContentType: m.ContentType, MediaType: m.MediaType,
		Tail: model.Offset(m.Tail), Closed: m.Closed, TTL: m.TTL,
		RetainedFrom: model.Offset(m.RetainedFrom), RecordFirst: m.RecordFirst,
		RecordNext: m.RecordNext, CreatedMs: m.CreatedMs, LastWriteMs: m.LastWriteMs,
	}
	if m.ExpiresMs != nil {
		t := time.UnixMilli(*m.ExpiresMs).UTC()
		i.ExpiresAt = &t
	}
	if m.Snapshot != nil {
		i.Snapshot = &SnapshotInfo{Offset: model.Offset(m.Snapshot.Offset),
			ContentType: m.Snapshot.ContentType, Digest: m.Snapshot.Digest, Size: m.Snapshot.Size}
	}
	return i
}
