package model

import (
	"fmt"
	"time"
)

// snapshot is a stream's visible snapshot (extension §2): one per stream, replaced by
// every publish at another offset (CONFORMANCE.md "Snapshots").
type snapshot struct {
	offset      Offset
	contentType string // as given; application/octet-stream when absent (§2.2)
	digest      string // SnapshotDigest over the normalized media type (D5)
	body        []byte
}

// PublishSnapshot is PUT {stream}/snapshot/{offset} (Offset: the decoded path segment)
// or PUT {stream}/snapshot?record=N (Record) (extension §2.2, §6.10), with Content-Type
// and Stream-Snapshot-Match as sent and the snapshot blob.
type PublishSnapshot struct {
	Stream      StreamKey
	Offset      *string
	Record      *string
	ContentType *string
	Match       *string
	Body        []byte
}

// GetSnapshot is GET {stream}/snapshot (Offset nil: the 307 to the visible snapshot,
// §2.3) or GET {stream}/snapshot/{offset} (§2.5).
type GetSnapshot struct {
	Stream StreamKey
	Offset *string
}

// DeleteSnapshot is DELETE {stream}/snapshot/{offset} (extension §2.6).
type DeleteSnapshot struct {
	Stream StreamKey
	Offset string
}

// Name implements Command.
func (c PublishSnapshot) Name() string {
	return fmt.Sprintf("PUT /%s/snapshot%s ct=%s match=%s body=%q", c.Stream, position(c.Offset, c.Record),
		show(c.ContentType), show(c.Match), clip(c.Body))
}

// Name implements Command.
func (c GetSnapshot) Name() string {
	if c.Offset == nil {
		return "GET /" + c.Stream.String() + "/snapshot"
	}
	return fmt.Sprintf("GET /%s/snapshot/%q", c.Stream, *c.Offset)
}

// Name implements Command.
func (c DeleteSnapshot) Name() string {
	return fmt.Sprintf("DELETE /%s/snapshot/%q", c.Stream, c.Offset)
}

func position(offset, record *string) string {
	switch {
	case offset != nil:
		return fmt.Sprintf("/%q", *offset)
	case record != nil:
		return fmt.Sprintf("?record=%q", *record)
	}
	return ""
}

// SnapshotRef is the visible snapshot as Stream-Snapshot-Offset and
// Stream-Snapshot-Digest report it (extension §2.4); Offset nil renders as "-1" (no
// snapshot: /bootstrap, §3.2).
type SnapshotRef struct {
	Offset *Offset
	Digest string
}

func (sn *snapshot) ref() *SnapshotRef {
	return &SnapshotRef{Offset: offsetPtr(sn.offset), Digest: sn.digest}
}

// publishSnapshot: PUT {stream}/snapshot/{offset} or ?record= (extension §2.2), decided
// in this order:
//
//  1. 400 bad ids; 400 INVALID_OFFSET for a malformed offset (D2: sentinels are
//     not offsets) or neither offset nor record; 400 INVALID_RECORD_PARAMS for a
//     malformed record (parsePosition).
//  2. 400 INVALID_CONTENT_TYPE for a malformed Content-Type; absent means
//     application/octet-stream (§2.2).
//  3. 404 for a missing or expired stream. Publishing restarts no TTL.
//  4. The boundary (stream.boundary): past the tail 409, below retention 410, not a
//     message boundary 400 (§2.2, §6.10); by record on a JSON stream, below F 410 and
//     past N 400, on another stream 400 INVALID_RECORD_PARAMS.
//  5. Stream-Snapshot-Match present and not the visible snapshot's digest (or none is
//     visible): 409 SNAPSHOT_MATCH_FAILED (§2.2).
//  6. At the visible snapshot's offset: the same digest is an idempotent 204, another
//     409 SNAPSHOT_CONFLICT (§2.2 "Idempotency").
//  7. Otherwise the snapshot replaces the visible one (§2.2: one visible snapshot;
//     retention is unchanged). 204 with Stream-Snapshot-Offset and -Digest.
func (s State) publishSnapshot(c PublishSnapshot, now time.Time) (State, Result) {
	if err := checkKey(c.Stream); err != nil {
		return s, fail(StatusBadRequest, err)
	}
	at, err := parsePosition(c.Offset, c.Record)
	if err != nil {
		return s, fail(StatusBadRequest, err)
	}
	ct, mt := DefaultContentType, DefaultContentType
	if c.ContentType != nil && *c.ContentType != "" {
		if mt, err = MediaType(*c.ContentType); err != nil {
			return s, fail(StatusBadRequest, ErrBadContentType)
		}
		ct = *c.ContentType
	}
	s, st, res := s.liveOrGone(c.Stream, now)
	if st == nil {
		return s, res
	}
	off, res, ok := st.snapshotBoundary(at)
	if !ok {
		return s, res
	}
	sn := &snapshot{offset: off, contentType: ct, digest: SnapshotDigest(mt, c.Body),
		body: append([]byte(nil), c.Body...)}
	cur := st.snapshot
	switch {
	case c.Match != nil && (cur == nil || cur.digest != *c.Match):
		return s, fail(StatusConflict, ErrSnapshotMatch)
	case cur != nil && cur.offset == off && cur.digest != sn.digest:
		return s, fail(StatusConflict, ErrSnapshotConflict)
	case cur != nil && cur.offset == off:
		return s, Result{Status: StatusNoContent, Snapshot: cur.ref()}.advertise(st)
	}
	st = st.clone()
	st.snapshot = sn
	return s.withStream(c.Stream, st), Result{Status: StatusNoContent, Snapshot: sn.ref()}.advertise(st)
}

// getSnapshot: GET {stream}/snapshot and GET {stream}/snapshot/{offset} (extension
// §2.3, §2.5): 400 bad ids or offset; 404 missing stream; 404
// SNAPSHOT_NOT_FOUND when there is no visible snapshot (at that offset: a superseded
// one is gone, §2.5). The latest: 307 whose Location is the visible snapshot's
// resource, with Stream-Snapshot-Offset and -Digest. At an offset: 200 with the blob,
// its Content-Type as published, Stream-Snapshot-Offset, -Digest, Stream-Next-Offset =
// the snapshot's offset (where updates continue) and Stream-Up-To-Date true or false:
// whether that offset is the tail (§2.5). Reading a snapshot restarts no TTL.
func (s State) getSnapshot(c GetSnapshot, now time.Time) (State, Result) {
	if err := checkKey(c.Stream); err != nil {
		return s, fail(StatusBadRequest, err)
	}
	var at Offset
	if c.Offset != nil {
		o, err := ParseOffset(*c.Offset)
		if err != nil {
			return s, fail(StatusBadRequest, ErrBadOffset)
		}
		at = o
	}
	s, st, res := s.liveOrGone(c.Stream, now)
	if st == nil {
		return s, res
	}
	sn := st.snapshot
	if sn == nil || (c.Offset != nil && sn.offset != at) {
		return s, fail(StatusNotFound, ErrSnapshotNotFound)
	}
	if c.Offset == nil {
		return s, Result{Status: StatusTemporaryRedirect, Snapshot: sn.ref(), SnapshotLocation: offsetPtr(sn.offset)}
	}
	return s, Result{Status: StatusOK, ContentType: sn.contentType, Snapshot: sn.ref(),
		NextOffset: offsetPtr(sn.offset), UpToDate: sn.offset == st.tail(), UpToDateAlways: true,
		Body: append([]byte(nil), sn.body...)}.recordBounds(st)
}

// deleteSnapshot: DELETE {stream}/snapshot/{offset} (extension §2.6): 400 bad ids or
// offset; 404 missing stream; 404 SNAPSHOT_NOT_FOUND unless it is the visible snapshot
// (a superseded or never published one); the visible snapshot is the latest one, so 409
// SNAPSHOT_IN_USE (D5 amendment: /bootstrap must stay complete, §3.4). Nothing changes.
func (s State) deleteSnapshot(c DeleteSnapshot, now time.Time) (State, Result) {
	if err := checkKey(c.Stream); err != nil {
		return s, fail(StatusBadRequest, err)
	}
	at, err := ParseOffset(c.Offset)
	if err != nil {
		return s, fail(StatusBadRequest, ErrBadOffset)
	}
	s, st, res := s.liveOrGone(c.Stream, now)
	if st == nil {
		return s, res
	}
	if st.snapshot == nil || st.snapshot.offset != at {
		return s, fail(StatusNotFound, ErrSnapshotNotFound)
	}
	return s, fail(StatusConflict, ErrSnapshotLatest)
}
