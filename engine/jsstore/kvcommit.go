package jsstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/dsd-project/dsd/engine/storage"
)

// kvPlan lays out a group's subscription puts (see kv.go): those carried by frames and
// one journal message per partition for the rest.
type kvPlan struct {
	framed  []framedKV
	journal map[int]*journalPlan
	touched map[kvRef]bool // every key an earlier change of the group wrote
}

// framedKV is a change's puts carried in frame f.
type framedKV struct {
	change int
	k      int
	f      *framePlan
	puts   []kvPut
}

// journalPlan is partition k's journal message of the group.
type journalPlan struct {
	k       int
	entries []journalEntry
	seq     uint64
	err     error
}

type journalEntry struct {
	change int
	puts   []kvPut
}

func newKVPlan() *kvPlan {
	return &kvPlan{journal: map[int]*journalPlan{}, touched: map[kvRef]bool{}}
}

// planKV places change i's puts (s.mu held; the change's own frame, if any, is laid out).
// A prefix delete becomes a delete of every key it may reach: those holding a value and
// those an earlier change of the group wrote.
func (s *Store) planKV(pl *plan, i int, c *storage.Change) {
	byPart := map[int][]kvPut{}
	for _, u := range c.Subs {
		k := s.kvPartition(u.Space, u.Key)
		p := s.parts[k] // open: resolve checked
		if !u.Prefix {
			byPart[k] = append(byPart[k], kvPut{Space: u.Space, Key: u.Key, Val: u.Value, Del: u.Value == nil})
			continue
		}
		reach := map[string]bool{}
		for _, key := range p.kv.keys(u.Space, string(u.Key)) {
			reach[key] = true
		}
		for r := range pl.kv.touched {
			if r.space == u.Space && len(r.key) >= len(u.Key) && r.key[:len(u.Key)] == string(u.Key) &&
				s.kvPartition(r.space, []byte(r.key)) == k {
				reach[r.key] = true
			}
		}
		for _, key := range sortedKeys(reach) {
			byPart[k] = append(byPart[k], kvPut{Space: u.Space, Key: []byte(key), Del: true})
		}
	}
	f := pl.bySID[c.SID]
	if c.SID != 0 && ownParts(c) && f != nil && len(byPart) == 1 && byPart[f.k] != nil && !pl.kv.overlaps(byPart[f.k]) {
		puts := byPart[f.k]
		f.h.Parts[len(f.h.Parts)-1].KV = puts
		pl.kv.framed = append(pl.kv.framed, framedKV{change: i, k: f.k, f: f, puts: puts})
	} else {
		for k, puts := range byPart {
			j := pl.kv.journal[k]
			if j == nil {
				j = &journalPlan{k: k}
				pl.kv.journal[k] = j
			}
			j.entries = append(j.entries, journalEntry{change: i, puts: puts})
		}
	}
	for _, puts := range byPart {
		for _, p := range puts {
			pl.kv.touched[kvRef{p.Space, string(p.Key)}] = true
		}
	}
}

func (kp *kvPlan) overlaps(puts []kvPut) bool {
	for _, p := range puts {
		if kp.touched[kvRef{p.Space, string(p.Key)}] {
			return true
		}
	}
	return false
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// applyFramedKV folds the puts of acknowledged frames in, in change order.
func (s *Store) applyFramedKV(pl *plan) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, fk := range pl.kv.framed {
		p := s.parts[fk.k]
		if fk.f.err != nil || p == nil {
			continue
		}
		for _, put := range fk.puts {
			p.kv.apply(put, fk.f.seq)
		}
	}
}

// publishJournals publishes each partition's journal message of the changes that have
// not failed, rolling up the previous one (materialized: settleKV ran first), and folds
// the acknowledged ones in.
func (s *Store) publishJournals(pl *plan, errs []error) {
	var js []*journalPlan
	for _, j := range pl.kv.journal {
		kept := j.entries[:0]
		for _, e := range j.entries {
			if errs[e.change] == nil {
				kept = append(kept, e)
			}
		}
		if j.entries = kept; len(kept) > 0 {
			js = append(js, j)
		}
	}
	s.run(len(js), func(i int) { s.publishJournal(js[i]) })
	s.mu.Lock()
	for _, j := range js {
		for _, e := range j.entries {
			failChanges(errs, []int{e.change}, j.err)
		}
		p := s.parts[j.k]
		if j.err != nil || p == nil {
			continue
		}
		p.kv.journalSeq = j.seq
		for _, e := range j.entries {
			for _, put := range e.puts {
				p.kv.apply(put, j.seq)
			}
		}
	}
	s.mu.Unlock()
	for _, j := range js {
		if storage.PerStream(j.err) {
			s.reloadKV(j.k)
		}
	}
}

func (s *Store) publishJournal(j *journalPlan) {
	var m journalMsg
	for _, e := range j.entries {
		m.Puts = append(m.Puts, e.puts...)
	}
	data, err := json.Marshal(m)
	if err != nil {
		j.err = err
		return
	}
	if len(data) > s.opts.ChunkBytes {
		j.err = fmt.Errorf("jsstore: the subscription records of one commit are %d bytes, above %d", len(data), s.opts.ChunkBytes)
		return
	}
	s.mu.RLock()
	expect := s.parts[j.k].kv.journalSeq
	s.mu.RUnlock()
	j.seq, j.err = s.publish(pub{k: j.k, subj: s.journalSubj(j.k), data: data, cas: true, expect: expect, rollup: true})
}

// kvPending reports whether some put is not materialized yet.
func (s *Store) kvPending() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, p := range s.parts {
		if len(p.kv.pending) > 0 {
			return true
		}
	}
	return false
}

// errKVPending refuses Trim and Collect while a put is not materialized.
var errKVPending = errors.New("jsstore: subscription records are not materialized yet (retried at the next commit)")

// settleKV materializes every pending put on its key's subject (concurrently); the first
// error is returned and what failed stays pending. commitMu is held.
func (s *Store) settleKV() error {
	type job struct {
		k      int
		ref    kvRef
		put    kvPut
		expect uint64
		valSeq uint64
		seq    uint64
		err    error
	}
	if s.noSettle {
		return nil
	}
	var jobs []*job
	s.mu.RLock()
	for k, p := range s.parts {
		for r := range p.kv.pending {
			e := p.kv.entry(r.space, r.key, false)
			jobs = append(jobs, &job{k: k, ref: r, put: kvPut{Space: r.space, Key: []byte(r.key), Val: e.val, Del: e.val == nil},
				expect: e.subj, valSeq: e.valSeq})
		}
	}
	s.mu.RUnlock()
	s.run(len(jobs), func(i int) {
		j := jobs[i]
		data, _ := json.Marshal(j.put)
		j.seq, j.err = s.publish(pub{k: j.k, subj: s.kvSubj(j.k, j.ref.space, j.ref.key), data: data, cas: true,
			expect: j.expect, rollup: true})
	})
	var first error
	reload := map[int]bool{}
	s.mu.Lock()
	for _, j := range jobs {
		p := s.parts[j.k]
		if p == nil {
			continue
		}
		if j.err != nil {
			first = cmpErr(first, j.err)
			reload[j.k] = reload[j.k] || storage.PerStream(j.err)
			continue
		}
		e := p.kv.entry(j.ref.space, j.ref.key, true)
		e.subj = j.seq
		if e.valSeq == j.valSeq {
			e.valSeq = j.seq
			delete(p.kv.pending, j.ref)
		}
	}
	s.mu.Unlock()
	for k := range reload {
		s.reloadKV(k)
	}
	return first
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// failSubs fails the changes of group that write subscription records.
func failSubs(group []storage.Change, errs []error, err error) {
	for i := range group {
		if len(group[i].Subs) > 0 && errs[i] == nil {
			errs[i] = err
		}
	}
}
