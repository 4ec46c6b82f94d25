package engine

import (
	"time"

	"github.com/dsd-project/dsd/model"
)

// withPublished runs fn on the stored meta of s and its visible snapshot's body, read
// together, once that stored state is the state readers see. Between a commit and its publication the store is ahead of the published
// view; a reader that reads the store directly (a snapshot body, a bootstrap) waits for
// the publication, so it never sees a write before ordinary reads do (linearizability).
// Errors: model.ErrStreamNotFound, and fn's.
func (e *Engine) withPublished(s *stream, fn func(m *streamMeta, snap []byte) error) error {
	for {
		s.mu.Lock()
		v, gone, ch := s.vis, s.visDeleted, s.waitCh()
		s.mu.Unlock()
		if gone || v == nil {
			return model.ErrStreamNotFound
		}
		sm, snap, err := e.st.SnapshotOf(s.sid)
		m := fromStored(sm)
		switch {
		case err != nil:
			return err
		case m == nil:
			return model.ErrStreamNotFound
		case samePublished(m, v):
			return fn(m, snap)
		}
		select {
		case <-ch:
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// samePublished reports whether stored meta m shows the same state as published view v
// in everything a reader of the store can observe.
func samePublished(m, v *streamMeta) bool {
	if m.Tail != v.Tail || m.RecordNext != v.RecordNext || m.RetainedFrom != v.RetainedFrom ||
		m.RecordFirst != v.RecordFirst || m.Closed != v.Closed || m.SoftDeleted != v.SoftDeleted {
		return false
	}
	a, b := m.Snapshot, v.Snapshot
	return (a == nil) == (b == nil) && (a == nil || (a.Offset == b.Offset && a.Digest == b.Digest))
}
