package engine

import (
	"time"

	"github.com/dsd-project/dsd/engine/storage"
	"github.com/dsd-project/dsd/model"
)

// ListQuery selects streams of a bucket (extension §1.4): bucket-local ids starting with
// Prefix, strictly after After, at most Limit (1..1000).
type ListQuery struct {
	Prefix string
	After  string
	Limit  int
}

// ListedStream is one entry of a bucket listing.
type ListedStream struct {
	StreamID    string
	Closed      bool
	ContentType string
	Tail        model.Offset
	CreatedMs   int64
	LastWriteMs int64
}

// StreamList is a page of a bucket listing, sorted by stream id. NextCursor is the last
// id returned when HasMore.
type StreamList struct {
	Streams    []ListedStream
	HasMore    bool
	NextCursor string
}

// ListStreams lists a bucket's live streams (extension §1.4); soft-deleted and expired
// streams are left out. Errors: model.ErrBadBucketID, model.ErrBucketNotFound.
func (e *Engine) ListStreams(bucket string, q ListQuery) (StreamList, error) {
	// The listing leaves expired streams out itself: no expiry pass over the bucket
	// (Bucket's), so a page costs the same at any cursor and loads no stream.
	if err := e.bucketExists(bucket); err != nil {
		return StreamList{}, err
	}
	prefix := bucket + "/" + q.Prefix
	seek := prefix
	if q.After != "" {
		seek = bucket + "/" + q.After + "\x00"
	}
	now := e.now()
	var out StreamList
	var sids []uint64
	err := e.st.Names(prefix, seek, func(_ string, sm *storage.Meta) bool {
		m := fromStored(sm)
		if m.SoftDeleted || e.storedExpired(m, now) {
			return true
		}
		if len(out.Streams) == q.Limit {
			out.HasMore = true
			return false
		}
		out.Streams = append(out.Streams, ListedStream{StreamID: m.Stream, Closed: m.Closed,
			ContentType: m.ContentType, Tail: model.Offset(m.Tail), CreatedMs: m.CreatedMs,
			LastWriteMs: m.LastWriteMs})
		sids = append(sids, m.ID)
		return true
	})
	if err == nil {
		e.loadedLastWrites(out.Streams, sids)
	}
	if out.HasMore {
		out.NextCursor = out.Streams[len(out.Streams)-1].StreamID
	}
	return out, err
}

// loadedLastWrites replaces the stored last write time of each listed stream (of
// incarnation sids[i]) that is loaded by its committed one: the stored meta may lag by
// up to metaRefreshIdleMs. It runs after the storage transaction, so that no stream's
// lock is waited for inside one.
func (e *Engine) loadedLastWrites(ls []ListedStream, sids []uint64) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	for i, sid := range sids {
		s, ok := e.byID[sid]
		if !ok {
			continue
		}
		s.mu.Lock()
		if s.vis != nil && !s.evicted {
			ls[i].LastWriteMs = max(ls[i].LastWriteMs, s.vis.LastWriteMs)
		}
		s.mu.Unlock()
	}
}

// storedExpired reports whether the stored stream m's lifetime has ended at now,
// as the loaded incarnation sees it when there is one: its access time, and no expiry
// while live readers hold it. Unloaded, its access time is accessOfLocked's.
func (e *Engine) storedExpired(m *streamMeta, now time.Time) bool {
	if m.TTL == nil && m.ExpiresMs == nil {
		return false
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	if s, ok := e.byID[m.ID]; ok {
		return s.live.Load() == 0 && m.expired(now, s.access.Load())
	}
	return m.expired(now, e.accessOfLocked(m))
}

// accessOfLocked returns the last access time of a stored stream: from memory when
// loaded or evicted (evictLocked), else the stored one, at least the start time.
// e.mu is held.
func (e *Engine) accessOfLocked(m *streamMeta) int64 {
	if s, ok := e.byID[m.ID]; ok {
		return s.access.Load()
	}
	return max(m.AccessMs, e.startedMs, e.accessed[m.ID])
}
