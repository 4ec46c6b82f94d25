package engine

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"

	"github.com/dsd-project/dsd/engine/storage"

	"github.com/dsd-project/dsd/model"
)

// Position names a boundary of a stream by offset or, on JSON streams, by record ordinal
// (extension §2.2 "?record=", §6.10).
type Position struct {
	Offset   model.Offset
	Record   uint64
	ByRecord bool
}

// SnapshotRequest publishes a snapshot (extension §2.2).
type SnapshotRequest struct {
	At          Position
	ContentType string  // stored and returned as given; "" = application/octet-stream
	Body        []byte  // the snapshot blob
	Match       *string // Stream-Snapshot-Match: the digest of the visible snapshot
}

// SnapshotDigest computes D5's digest: "sha256:" + hex SHA-256 over the 8-byte
// little-endian length of the normalized content type, the content type, the body.
func SnapshotDigest(mediaType string, body []byte) string {
	h := sha256.New()
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(mediaType)))
	h.Write(n[:])
	h.Write([]byte(mediaType))
	h.Write(body)
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// PublishSnapshot stores the visible snapshot of a stream at a message boundary
// (extension §2.2, §6.10). Republishing the same content at the visible snapshot's offset
// succeeds with the same digest; different content there is ErrSnapshotConflict. A new
// offset replaces the visible snapshot. Appends are never blocked: the snapshot's
// boundary is its offset.
// Errors: model.ErrStreamNotFound, model.ErrStreamGone, model.ErrOffsetNotBoundary (400),
// model.ErrSnapshotConflict (past the tail, different content, Match failed: 409 via
// ErrSnapshotMatch), model.ErrOffsetGone (410), *model.RecordRangeError.
func (e *Engine) PublishSnapshot(key model.StreamKey, req SnapshotRequest) (SnapshotInfo, error) {
	if err := e.checkWritable(); err != nil {
		return SnapshotInfo{}, err
	}
	if req.ContentType == "" {
		req.ContentType = model.DefaultContentType
	}
	mt, err := model.MediaType(req.ContentType)
	if err != nil {
		return SnapshotInfo{}, err
	}
	s, _, err := e.readable(key, false)
	if err != nil {
		return SnapshotInfo{}, err
	}
	info := SnapshotInfo{ContentType: req.ContentType, Digest: SnapshotDigest(mt, req.Body), Size: int64(len(req.Body))}
	s.mu.Lock()
	if s.evicted {
		s.mu.Unlock()
		return e.PublishSnapshot(key, req)
	}
	decided := s.lastLSN
	o, lsn, err := e.decideSnapshot(s, &req, &info)
	s.mu.Unlock()
	switch {
	case err != nil:
		return SnapshotInfo{}, e.refuse(decided, err)
	case o != nil:
		return info, e.await(o)
	}
	return info, e.waitDurable(lsn)
}

// decideSnapshot validates a publish under s.mu and queues it, or returns the lsn to
// wait for when it repeats the visible snapshot.
func (e *Engine) decideSnapshot(s *stream, req *SnapshotRequest, info *SnapshotInfo) (*op, uint64, error) {
	if err := e.liveForWrite(s, e.now()); err != nil {
		return nil, 0, err
	}
	// Committed data, decided retention: a retention queued before this publish counts.
	bv := *s.vis
	bv.RetainedFrom, bv.RecordFirst = s.m.RetainedFrom, s.m.RecordFirst
	off, rec, err := e.snapshotBoundary(&bv, req.At)
	if err != nil {
		return nil, 0, err
	}
	info.Offset = model.Offset(off)
	cur := s.m.Snapshot
	if req.Match != nil && (cur == nil || cur.Digest != *req.Match) {
		return nil, 0, model.ErrSnapshotMatch
	}
	if cur != nil && cur.Offset == off {
		if cur.Digest != info.Digest {
			return nil, 0, model.ErrSnapshotConflict
		}
		return nil, s.lastLSN, nil
	}
	nm := s.edit()
	nm.Snapshot = &snapshotMeta{Offset: off, ContentType: info.ContentType, Digest: info.Digest, Size: info.Size, RecordAt: rec}
	o := &op{s: s, ch: storage.Change{SID: s.sid, Meta: s.storedMeta(nm),
		PutSnapshot: &storage.SnapshotBody{Offset: off, Body: req.Body}},
		pub: func() {
			s.publish(nm, nil)
			if cur != nil {
				e.retireSnapshot(s, cur.Offset)
			}
		}}
	if err := e.q.push(o); err != nil {
		return nil, 0, err
	}
	s.m, s.lastLSN = nm, o.lsn
	return o, 0, nil
}

// snapshotBoundary resolves and validates a snapshot position against the committed view
// (extension §2.2): aligned (400), not past the tail (409), not below retention (410).
func (e *Engine) snapshotBoundary(v *streamMeta, at Position) (off, rec uint64, err error) {
	if at.ByRecord {
		return e.recordBoundary(v, at.Record)
	}
	off = uint64(at.Offset)
	switch {
	case off > v.Tail:
		return 0, 0, model.ErrSnapshotPastTail
	case off < v.RetainedFrom:
		return 0, 0, model.ErrOffsetGone
	}
	if off < v.Tail {
		if err := e.st.Messages(v.segments(), off, v.Tail, storage.One, nil); err != nil {
			return 0, 0, err
		}
	}
	if v.isJSON() {
		rec, err = e.ordinalAt(v, off)
	}
	return off, rec, err
}

// recordBoundary resolves record r of a JSON view to its offset (extension §6.10).
func (e *Engine) recordBoundary(v *streamMeta, r uint64) (off, rec uint64, err error) {
	if !v.isJSON() {
		return 0, 0, model.ErrBadRecord
	}
	if r < v.RecordFirst || r > v.RecordNext {
		return 0, 0, &model.RecordRangeError{First: v.RecordFirst, Next: v.RecordNext, Gone: r < v.RecordFirst}
	}
	off, ok, err := e.recordOffset(v, r)
	if err == nil && !ok {
		err = model.ErrOffsetGone
	}
	return off, r, err
}

// retireSnapshot deletes the body of a superseded snapshot once its successor is
// published: until then a reader of the published view may still read it. It runs on the
// committer after the publication and queues the delete, unless the offset is visible
// again meanwhile.
func (e *Engine) retireSnapshot(s *stream, off uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.deleted || (s.m.Snapshot != nil && s.m.Snapshot.Offset == off) {
		return
	}
	o := &op{ch: storage.Change{SID: s.sid, DropSnapshot: &off}}
	if e.q.push(o) == nil {
		s.lastLSN = o.lsn
	}
}

// Snapshot returns the visible snapshot, its body and the stream's metadata (extension
// §2.3, §2.5). at, when non-nil, must name the visible snapshot's offset.
// Errors: model.ErrStreamNotFound, model.ErrStreamGone, model.ErrSnapshotNotFound.
func (e *Engine) Snapshot(key model.StreamKey, at *model.Offset) (StreamInfo, []byte, error) {
	s, _, err := e.readable(key, false)
	if err != nil {
		return StreamInfo{}, nil, err
	}
	var info StreamInfo
	var body []byte
	err = e.withPublished(s, func(m *streamMeta, snap []byte) error {
		if m.Snapshot == nil || (at != nil && uint64(*at) != m.Snapshot.Offset) {
			return model.ErrSnapshotNotFound
		}
		info, body = m.info(), snap
		return nil
	})
	return info, body, err
}

// DeleteSnapshot answers DELETE {stream}/snapshot/{offset} (extension §2.6, D5
// amendment): the visible snapshot is the latest one and /bootstrap needs it, so it is
// never deleted; a superseded or unknown offset is not found. Nothing changes.
// Errors: model.ErrSnapshotNotFound (no such visible snapshot), model.ErrSnapshotLatest,
// model.ErrStorageFailed (the stream's storage failed).
func (e *Engine) DeleteSnapshot(key model.StreamKey, at model.Offset) error {
	s, _, err := e.readable(key, false)
	if err != nil {
		return err
	}
	s.mu.Lock()
	cur, lsn, broken := s.m.Snapshot, s.lastLSN, s.broken.Load() != nil
	s.mu.Unlock()
	switch {
	case broken:
		return model.ErrStorageFailed
	case cur == nil || cur.Offset != uint64(at):
		return e.refuse(lsn, model.ErrSnapshotNotFound)
	}
	return e.refuse(lsn, model.ErrSnapshotLatest)
}
