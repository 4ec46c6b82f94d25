package jsstore

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/nats-io/nats.go/jetstream"
)

// maybeCheckpoint rewrites sid's checkpoint when enough log has grown since the last.
func (s *Store) maybeCheckpoint(k int, sid uint64) {
	s.mu.RLock()
	_, in := s.lookup(sid)
	due := in != nil && (in.sinceFrames >= s.opts.CheckpointFrames || in.sinceBytes >= s.opts.CheckpointBytes)
	s.mu.RUnlock()
	if due {
		_ = s.writeCheckpoint(k, sid) // derived: a failed one is retried at the next commit
	}
}

// writeCheckpoint publishes the fold of sid's log up to its last frame on the
// checkpoint subject, rolling up the previous one. commitMu is held.
func (s *Store) writeCheckpoint(k int, sid uint64) error {
	s.mu.RLock()
	_, in := s.lookup(sid)
	if in == nil {
		s.mu.RUnlock()
		return nil
	}
	data, err := json.Marshal(in)
	s.mu.RUnlock()
	if err != nil {
		return err
	}
	if len(data) > s.opts.ChunkBytes {
		return fmt.Errorf("jsstore: checkpoint of stream id %d is %d bytes, above %d", sid, len(data), s.opts.ChunkBytes)
	}
	if _, err := s.publish(pub{k: k, subj: s.logSubj(k, sid) + ".m", data: data, rollup: true}); err != nil {
		return err
	}
	s.mu.Lock()
	in.sinceFrames, in.sinceBytes = 0, 0
	s.mu.Unlock()
	return nil
}

// Trash returns up to limit deleted incarnations of the open partitions whose storage
// is still to free, by id.
func (s *Store) Trash(limit int) ([]uint64, error) {
	return s.select_(limit, func(in *inc) bool { return in.Deleted && in.Created && in.Stage < 3 }), nil
}

// Trims returns the incarnations marked for trimming, by id.
func (s *Store) Trims() ([]uint64, error) {
	return s.select_(0, func(in *inc) bool { return in.Retained }), nil
}

func (s *Store) select_(limit int, keep func(*inc) bool) []uint64 {
	s.mu.RLock()
	var out []uint64
	for _, p := range s.parts {
		for sid, in := range p.incs {
			if keep(in) {
				out = append(out, sid)
			}
		}
	}
	s.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}

// Collect frees a deleted incarnation in three steps, one purge each (a purge is one
// raft operation whatever its size, so limit does not split them further): its staged
// chunks; its log up to the delete frame, kept as a tombstone; its checkpoint.
func (s *Store) Collect(sid uint64, limit int) (bool, error) {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	s.mu.RLock()
	k, in := s.lookup(sid)
	stage := 0
	if in != nil {
		stage = in.Stage
	}
	s.mu.RUnlock()
	if in == nil || !in.Deleted || stage >= 3 {
		return true, nil
	}
	ctx, cancel := s.readCtx()
	defer cancel()
	subj := s.logSubj(k, sid)
	var err error
	switch stage {
	case 0:
		err = s.streams[k].Purge(ctx, jetstream.WithPurgeSubject(subj+".c"))
	case 1:
		err = s.streams[k].Purge(ctx, jetstream.WithPurgeSubject(subj), jetstream.WithPurgeKeep(1))
	case 2:
		err = s.streams[k].Purge(ctx, jetstream.WithPurgeSubject(subj+".m"))
	}
	if err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if stage < 2 {
		in.Stage = stage + 1
		return false, nil
	}
	tomb := newInc(sid)
	tomb.Seq, tomb.Deleted, tomb.Stage = in.Seq, true, 3
	if p := s.parts[k]; p != nil {
		p.incs[sid] = tomb
	}
	return true, nil
}

// Trim frees sid's frames below its retention boundary (not while forks reference it):
// a checkpoint first takes over their state, then one purge removes every frame before
// the index entry at the boundary (and before the oldest snapshot body's frame).
// Messages and records below the boundary are unreadable from then on.
func (s *Store) Trim(sid uint64, limit int) (bool, error) {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	s.mu.Lock()
	k, in := s.lookup(sid)
	m := in.meta()
	if m == nil {
		if in != nil {
			in.Retained = false
		}
		s.mu.Unlock()
		return true, nil
	}
	if m.Refs > 0 {
		s.mu.Unlock()
		return true, nil
	}
	old := *in
	c := cursor{index: in.Index}
	e := c.entryAt(m.RetainedFrom)
	purgeTo := uint64(0)
	if e >= 0 {
		purgeTo = in.Index[e].Seq
		in.Index = append([]indexEntry(nil), in.Index[e:]...)
	}
	for _, ref := range in.Snaps {
		purgeTo = min(purgeTo, ref.Seq)
	}
	in.TrimOff, in.TrimRec, in.Retained = m.RetainedFrom, m.RecordFirst, false
	s.mu.Unlock()
	if err := s.writeCheckpoint(k, sid); err != nil {
		s.mu.Lock()
		in.Index, in.TrimOff, in.TrimRec, in.Retained = old.Index, old.TrimOff, old.TrimRec, old.Retained
		s.mu.Unlock()
		return false, err
	}
	if purgeTo > 1 {
		ctx, cancel := s.readCtx()
		defer cancel()
		err := s.streams[k].Purge(ctx, jetstream.WithPurgeSubject(s.logSubj(k, sid)), jetstream.WithPurgeSequence(purgeTo))
		if err != nil {
			return false, err
		}
	}
	return true, nil
}

// Probe publishes a small message of its own to the first open partition: nil once
// JetStream takes writes.
func (s *Store) Probe() error {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	s.mu.RLock()
	fault, closed := s.fault, s.closed
	k := -1
	for pk := range s.parts {
		if k < 0 || pk < k {
			k = pk
		}
	}
	s.mu.RUnlock()
	switch {
	case closed:
		return ErrClosed
	case fault != nil:
		if err := fault(); err != nil {
			return err
		}
	}
	if k < 0 {
		return nil
	}
	_, err := s.publish(pub{k: k, subj: fmt.Sprintf("%s.%d.p", s.root, k), data: []byte("probe"), rollup: true})
	return err
}
