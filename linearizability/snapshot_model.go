package linearizability

import "github.com/dsd-project/dsd/model"

// SnapshotType is the Content-Type of every snapshot the workload publishes.
const SnapshotType = "application/octet-stream"

// blobDigest is the D5 digest of a snapshot blob the workload published.
func blobDigest(body string) string { return model.SnapshotDigest(SnapshotType, []byte(body)) }

// emptyPart is the D5 digest of /bootstrap's first part without a snapshot: empty,
// application/octet-stream (extension §3.2).
var emptyPart = model.SnapshotDigest(model.DefaultContentType, nil)

// stepSnapshot publishes a snapshot (extension §2.2). Offsets are opaque, so the model
// knows the position of two tokens only: the tail's and the visible snapshot's. The
// workload publishes at the tail it has just read with no other write in flight on the
// stream, or again at the visible snapshot's offset; a publish at any other token
// cannot be placed (the history then fails). At the visible snapshot's offset the same
// blob is an idempotent 204 and another blob 409; at the tail the snapshot replaces the
// visible one. A 204 reports the offset and the blob's D5 digest.
func stepSnapshot(s State, in Input, out Output) (bool, State) {
	atSnap := s.Exists && s.SnapTok != "" && in.Offset == s.SnapTok
	atTail := s.Exists && s.TailExact && in.Offset == s.Tail
	blob := blobDigest(in.Body)
	if out.Unknown() {
		if atTail && !atSnap {
			return true, s.withSnapshot(in.Offset, blob)
		}
		return true, s
	}
	switch {
	case !s.Exists:
		return out.Status == 404, s
	case atSnap && s.SnapBlob != blob:
		return s.refused(out.Status == 409, out)
	case !atSnap && !atTail:
		return false, s
	case out.Status != 204 || out.SnapOffset != in.Offset || out.SnapDigest != blob:
		return false, s
	case atSnap:
		return true, s
	}
	return true, s.withSnapshot(in.Offset, blob)
}

// withSnapshot makes the snapshot at the tail token tok visible.
func (s State) withSnapshot(tok, blob string) State {
	s.SnapTok, s.SnapLen, s.SnapDigest, s.SnapBlob, s.SnapRecs = tok, s.Len, s.Digest, blob, s.Recs
	return s
}

// stepRetain moves the retention boundary (extension §2.2): to the current boundary, a
// 204 no-op; to the visible snapshot's offset, a 204 that makes reads from -1 start
// there; to the tail past the snapshot (or with none), 409. Other tokens cannot be
// placed (see stepSnapshot). The 204 carries the tail.
func stepRetain(s State, in Input, out Output) (bool, State) {
	tok := in.Offset
	current := tok == s.RetTok || (s.RetTok == "" && tok == s.StartTok && tok != "")
	if out.Unknown() {
		if s.Exists && !current && tok == s.SnapTok && tok != "" {
			s = s.retainAtSnapshot()
		}
		return true, s
	}
	switch {
	case !s.Exists:
		return out.Status == 404, s
	case current:
		if out.Status != 204 {
			return false, s
		}
		return s.atTail(out.Offset)
	case tok == s.SnapTok && tok != "":
		if out.Status != 204 {
			return false, s
		}
		s = s.retainAtSnapshot()
		if isJSONStream(in.Stream) && !(isU(out.RecFirst, s.RetRecs) && isU(out.RecNext, s.Recs)) {
			return false, s // §6.10: F is the boundary's ordinal, no record is renumbered
		}
		return s.atTail(out.Offset)
	case s.TailExact && tok == s.Tail && s.Len > s.RetLen:
		return s.refused(out.Status == 409, out)
	}
	return false, s
}

// stepSnapRead reads the visible snapshot: 404 without one, else its offset, digest and
// blob, and Stream-Next-Offset (when sent) is the snapshot's offset, where updates
// continue (extension §2.3, §2.5).
func stepSnapRead(s State, out Output) (bool, State) {
	switch {
	case out.Unknown():
		return true, s
	case !s.Exists || s.SnapTok == "":
		return out.Status == 404, s
	}
	return out.Status == 200 && out.SnapOffset == s.SnapTok && out.SnapDigest == s.SnapBlob &&
		out.Blob == s.SnapBlob && (out.Offset == "" || out.Offset == s.SnapTok), s
}

// retainAtSnapshot moves the retention register to the snapshot register.
func (s State) retainAtSnapshot() State {
	s.RetTok, s.RetLen, s.RetDigest, s.RetRecs = s.SnapTok, s.SnapLen, s.SnapDigest, s.SnapRecs
	return s
}

// stepBootstrap checks /bootstrap (extension §3.2): the first part is the visible
// snapshot (or an empty application/octet-stream part, Stream-Snapshot-Offset -1), the
// update parts are exactly the content after the snapshot's offset (without one: after
// the retention boundary), and Stream-Next-Offset is the tail. On a JSON stream each
// update part is one record (§6.10) and Stream-Record-Start is the first one's ordinal.
func stepBootstrap(s State, in Input, out Output) (bool, State) {
	switch {
	case out.Unknown():
		return true, s
	case !s.Exists:
		return out.Status == 404, s
	}
	from, fromDigest, snap, blob, rec := s.RetLen, s.RetDigest, "-1", emptyPart, s.RetRecs
	if s.SnapTok != "" {
		from, fromDigest, snap, blob, rec = s.SnapLen, s.SnapDigest, s.SnapTok, s.SnapBlob, s.SnapRecs
	}
	if isJSONStream(in.Stream) && !(isU(out.RecStart, rec) && out.Msgs == s.Recs-rec &&
		isU(out.RecFirst, s.RetRecs) && isU(out.RecNext, s.Recs)) {
		return false, s
	}
	if out.Status != 200 || out.SnapOffset != snap || out.Blob != blob || out.Closed != s.Closed ||
		(s.SnapTok != "" && out.SnapDigest != s.SnapBlob) {
		return false, s
	}
	if out.Len != s.Len-from || out.Digest != s.Digest.Suffix(s.Len, fromDigest, from) {
		return false, s
	}
	return s.atTail(out.Offset)
}
