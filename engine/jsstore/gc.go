package jsstore

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/nats-io/nats.go/jetstream"
)

// Trash returns up to limit deleted incarnations of the open partitions whose storage
// is still to free, by id.
func (s *Store) Trash(limit int) ([]uint64, error) {
	return s.select_(limit, func(in *inc) bool { return in.Deleted }), nil
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

// Collect frees a deleted incarnation in three steps, one or two purges each (a purge is
// one raft operation whatever its size, so limit does not split them further): its
// staged chunks; its log (after raising the partition's high-water mark of ids to sid,
// so that LastSID never goes back); its checkpoint and, when still unbound, its name's
// subject. Nothing of it is left in JetStream then.
func (s *Store) Collect(sid uint64, limit int) (bool, error) {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	if err := s.settleFirst(); err != nil {
		return false, err
	}
	s.mu.RLock()
	k, in := s.lookup(sid)
	var stage int
	var name binding
	var hwm uint64
	if in != nil {
		stage, name, hwm = in.Stage, s.parts[k].names[in.Name], s.parts[k].hwm
	}
	s.mu.RUnlock()
	if in == nil || !in.Deleted {
		return true, nil
	}
	ctx, cancel := s.readCtx()
	defer cancel()
	subj := s.logSubj(k, sid)
	var err error
	switch stage {
	case 0:
		err = s.purge(ctx, k, subj+".c")
	case 1:
		if sid > hwm {
			data, _ := json.Marshal(binding{SID: sid})
			if _, err = s.publish(pub{k: k, subj: s.hwmSubj(k), data: data, rollup: true}); err != nil {
				return false, err
			}
		}
		err = s.purge(ctx, k, subj)
	default:
		err = s.purge(ctx, k, subj+".m")
		if err == nil && name.SID == 0 && name.Seq != 0 {
			err = s.purge(ctx, k, s.nameSubj(k, in.Name))
		}
	}
	if err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.parts[k]
	switch {
	case p == nil:
	case stage == 1:
		p.hwm = max(p.hwm, sid)
	case stage >= 2:
		delete(p.incs, sid)
		delete(s.sidPart, sid)
		if name.SID == 0 && p.names[in.Name] == name {
			delete(p.names, in.Name)
		}
		return true, nil
	}
	in.Stage = stage + 1
	return false, nil
}

func (s *Store) purge(ctx context.Context, k int, subj string) error {
	return s.streams[k].Purge(ctx, jetstream.WithPurgeSubject(subj))
}

func (s *Store) hwmSubj(k int) string { return fmt.Sprintf("%s.%d.h", s.root, k) }

// Trim frees sid's frames below its retention boundary (not while forks reference it):
// a checkpoint first takes over their state, then one purge removes every frame before
// the index entry at the boundary (and before the oldest snapshot body's frame).
// Messages and records below the boundary are unreadable from then on.
func (s *Store) Trim(sid uint64, limit int) (bool, error) {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	if err := s.settleFirst(); err != nil {
		return false, err
	}
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

// settleFirst materializes pending subscription records before a purge may free the
// frames that carry them (commitMu held).
func (s *Store) settleFirst() error {
	if !s.kvPending() {
		return nil
	}
	if err := s.settleKV(); err != nil {
		return fmt.Errorf("%w: %w", errKVPending, err)
	}
	return nil
}
