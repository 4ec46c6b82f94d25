package jsstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// kvAt is the puts a frame carried, at its sequence (gathered while loading).
type kvAt struct {
	seq  uint64
	puts []kvPut
}

// loadKV folds partition k's key subjects and journal into st (newest put wins, see
// kv.go); subjects are the partition's subjects as listed by its stream info.
func (s *Store) loadKV(ctx context.Context, k int, subjects map[string]uint64, st *kvState) error {
	base := fmt.Sprintf("%s.%d.", s.root, k)
	for subj := range subjects {
		rest := strings.TrimPrefix(subj, base)
		switch {
		case rest == "j":
			var jm journalMsg
			seq, err := s.lastRecord(ctx, k, subj, &jm)
			if err != nil {
				return fmt.Errorf("subscription journal: %w", err)
			}
			st.journalSeq = seq
			for _, p := range jm.Puts {
				st.apply(p, seq)
			}
		case strings.HasPrefix(rest, "s.") && strings.Count(rest, ".") == 1:
			var p kvPut
			seq, err := s.lastRecord(ctx, k, subj, &p)
			if err != nil {
				return fmt.Errorf("subscription record %s: %w", subj, err)
			}
			if seq == 0 {
				continue
			}
			e := st.entry(p.Space, string(p.Key), true)
			e.subj = max(e.subj, seq)
			st.apply(p, seq)
			if e.valSeq <= e.subj {
				delete(st.pending, kvRef{p.Space, string(p.Key)})
			}
		}
	}
	return nil
}

// reloadKV merges partition k's stored subscription state into the open partition after
// a failed publish of it (another writer, or in doubt): what is stored newer wins.
func (s *Store) reloadKV(k int) {
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.ResolveTimeout)
	defer cancel()
	info, err := s.streams[k].Info(ctx, jetstream.WithSubjectFilter(fmt.Sprintf("%s.%d.>", s.root, k)))
	if err != nil {
		return
	}
	st := newKVState()
	if err := s.loadKV(ctx, k, info.State.Subjects, &st); err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.parts[k]
	if p == nil {
		return
	}
	p.kv.journalSeq = max(p.kv.journalSeq, st.journalSeq)
	for space, sp := range st.spaces {
		for key, e := range sp.m {
			cur := p.kv.entry(space, key, true)
			cur.subj = max(cur.subj, e.subj)
			if e.valSeq > cur.valSeq {
				cur.val, cur.valSeq = e.val, e.valSeq
			}
			ref := kvRef{space, key}
			if cur.valSeq > cur.subj {
				p.kv.pending[ref] = true
			} else {
				delete(p.kv.pending, ref)
			}
		}
	}
}
