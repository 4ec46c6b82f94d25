package linearizability

import (
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
)

// roleOf assigns roles in turn: every other stream is a snapshot stream, unless the run
// is base-only.
func roleOf(i int, cfg Config) role {
	if cfg.BaseOnly || i%2 == 0 {
		return rolePlain
	}
	return roleSnapshot
}

func (r role) snapshots() bool { return r == roleSnapshot }

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

// snapshotOp reads the visible snapshot or bootstraps.
func (w *workload) snapshotOp(cr *ClientRecorder, rng *mrand.Rand, s *streamPlan) {
	if rng.IntN(3) > 0 {
		cr.Do(Input{Kind: OpBootstrap, Stream: s.name}, func() Output { return w.client.Bootstrap(s.name) })
		return
	}
	cr.Do(Input{Kind: OpSnapRead, Stream: s.name}, func() Output { return w.client.ReadSnapshot(s.name) })
}
