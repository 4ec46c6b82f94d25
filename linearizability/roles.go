package linearizability

import (
	"encoding/json"
	"fmt"
	mrand "math/rand/v2"
	"sync/atomic"
)

// role says what a stream of the workload is used for.
type role uint8

const (
	// rolePlain streams get the base operations and append-batch, and live readers.
	rolePlain role = iota
	// roleSnapshot streams also get snapshots, retention, snapshot reads and bootstrap
	// (extension §2, §3); no live readers follow them (retention may pass a lagging
	// reader, which would then have to bootstrap).
	roleSnapshot
	// roleJSON streams are application/json with record coordinates (extension §6):
	// snapshots and retention move F, and record-aware reads and Stream-Record-Match
	// appends join the snapshot operations.
	roleJSON
	// roleFork streams are forks of a plain stream (B-4.2), made during the run at an
	// explicit offset; afterwards they get the plain streams' operations. After the run
	// their source is deleted (soft: the fork references it, B-4.2-10).
	roleFork
)

// roleOf assigns roles in turn: plain, snapshot, JSON, plain, ..., leaving out the
// snapshot role without the snapshot extension and the JSON role without record
// coordinates (all plain when the run is base-only).
func roleOf(i int, cfg Config) role {
	roles := []role{rolePlain}
	if cfg.has(ExtSnapshot) {
		roles = append(roles, roleSnapshot)
	}
	if cfg.has(ExtRecords) {
		roles = append(roles, roleJSON)
	}
	roles = append(roles, rolePlain)
	return roles[i%len(roles)]
}

func (r role) snapshots() bool { return r == roleSnapshot || r == roleJSON }

// snapshots reports whether s gets snapshots and retention.
func (w *workload) snapshots(s *streamPlan) bool { return s.role.snapshots() && w.cfg.has(ExtSnapshot) }

// snapshotReads reports whether s gets snapshot reads or bootstraps (snapshotOp).
func (w *workload) snapshotReads(s *streamPlan) bool {
	return s.role.snapshots() && (w.cfg.has(ExtSnapshot) || w.cfg.has(ExtBootstrap))
}

// suffix ends the names of JSON streams (isJSONStream).
func (r role) suffix() string {
	if r == roleJSON {
		return jsonSuffix
	}
	return ""
}

// body is a unique append body for the role: the raw text, or on a JSON stream a JSON
// string of it, now and then an array of two or three (one record each, §6.1).
func (r role) body(rng *mrand.Rand, unique func() string) string {
	if r != roleJSON {
		return unique()
	}
	q := func() string { b, _ := json.Marshal(unique()); return string(b) }
	switch rng.IntN(4) {
	case 0:
		return "[" + q() + "," + q() + "]"
	case 1:
		return "[" + q() + " , " + q() + "," + q() + "]"
	}
	return q()
}

// recordOp is an operation of JSON streams (extension §6): a record-aware read of every
// retained record or at N, or an append conditional on the record tail a HEAD has just
// reported (§6.4: 412 when another append got in between).
func (w *workload) recordOp(cr *ClientRecorder, rng *mrand.Rand, s *streamPlan, body func() string) {
	switch rng.IntN(3) {
	case 0:
		which := "tail"
		if rng.IntN(4) == 0 {
			which = "now"
		}
		in := Input{Kind: OpRecordRead, Stream: s.name, Record: which}
		cr.Do(in, func() Output { return w.client.RecordRead(s.name, which) })
	default:
		head := cr.Do(Input{Kind: OpHead, Stream: s.name}, func() Output { return w.client.Head(s.name) })
		if head.Status != 200 || head.RecNext == nil {
			return
		}
		n := *head.RecNext
		in := Input{Kind: OpAppend, Stream: s.name, Body: body(), RecordMatch: &n}
		cr.Do(in, func() Output { return w.client.Append(in) })
	}
}

var snapshotBlobs atomic.Uint64

// snapshotSection publishes a snapshot or moves the retention boundary with no other
// write in flight on s, at offsets a HEAD has just reported: the tail (whose position
// the model knows), the visible snapshot, the current boundary. It is skipped once a
// write on s has had an unknown outcome, since that write could land in between.
func (w *workload) snapshotSection(cr *ClientRecorder, rng *mrand.Rand, s *streamPlan, c int) {
	if w.rec.HadUnknown(s.name) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	head := cr.Do(Input{Kind: OpHead, Stream: s.name}, func() Output { return w.client.Head(s.name) })
	if head.Status != 200 || head.Offset == "" {
		return
	}
	switch r := rng.IntN(10); {
	case r < 5 || (r < 6 && head.SnapOffset == ""):
		blob := fmt.Sprintf("snap-c%d.%d", c, snapshotBlobs.Add(1))
		w.publish(cr, s, head.Offset, blob)
	case r < 6:
		s.snapMu.Lock()
		blob := s.lastBlob
		s.snapMu.Unlock()
		if rng.IntN(2) == 0 || blob == "" {
			blob = fmt.Sprintf("other-c%d.%d", c, snapshotBlobs.Add(1)) // 409 unless it is new
		}
		w.publish(cr, s, head.SnapOffset, blob)
	case r < 9 && head.SnapOffset != "":
		in := Input{Kind: OpRetain, Stream: s.name, Offset: head.SnapOffset}
		cr.Do(in, func() Output { return w.client.SetRetention(s.name, in.Offset) })
	default:
		in := Input{Kind: OpRetain, Stream: s.name, Offset: head.Offset}
		cr.Do(in, func() Output { return w.client.SetRetention(s.name, in.Offset) })
	}
}

func (w *workload) publish(cr *ClientRecorder, s *streamPlan, tok, blob string) {
	in := Input{Kind: OpSnapshot, Stream: s.name, Offset: tok, Body: blob}
	out := cr.Do(in, func() Output { return w.client.PublishSnapshot(s.name, tok, blob) })
	if out.Status == 204 {
		s.snapMu.Lock()
		s.lastBlob = blob
		s.snapMu.Unlock()
	}
}

// snapshotOp reads the visible snapshot or bootstraps (each when its extension is on).
func (w *workload) snapshotOp(cr *ClientRecorder, rng *mrand.Rand, s *streamPlan) {
	if w.cfg.has(ExtBootstrap) && (rng.IntN(3) > 0 || !w.cfg.has(ExtSnapshot)) {
		cr.Do(Input{Kind: OpBootstrap, Stream: s.name}, func() Output { return w.client.Bootstrap(s.name) })
		return
	}
	cr.Do(Input{Kind: OpSnapRead, Stream: s.name}, func() Output { return w.client.ReadSnapshot(s.name) })
}
