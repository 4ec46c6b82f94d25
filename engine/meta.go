package engine

import (
	"time"

	"github.com/dsd-project/dsd/engine/storage"
	"github.com/dsd-project/dsd/model"
)

// streamMeta is the stored form of one stream incarnation (storage.Meta) with the
// engine's methods. It is rewritten in the same commit as every change to the stream
// (D4). Decided and committed states point to immutable values: a change copies the
// meta, edits the copy and hands it to the op.
type streamMeta storage.Meta

// The value types the engine shares with its storage backends.
type (
	forkMeta     = storage.Fork
	snapshotMeta = storage.Snapshot
	segment      = storage.Segment
)

// stored returns m as the storage type (no copy).
func (m *streamMeta) stored() *storage.Meta { return (*storage.Meta)(m) }

// fromStored returns a backend's meta as the engine's type (no copy); nil stays nil.
func fromStored(m *storage.Meta) *streamMeta { return (*streamMeta)(m) }

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
