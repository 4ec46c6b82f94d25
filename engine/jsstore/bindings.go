package jsstore

import (
	"encoding/json"
	"errors"

	"github.com/dsd-project/dsd/engine/storage"
)

// Phase 2 of a commit: the name bindings and bucket records of the changes whose frames
// were acknowledged, each a rolled-up message with a compare-and-set on its subject.

// namePlan is the binding of one name the group changes: its operations in order, then
// the binding decided from those that succeeded.
type namePlan struct {
	k    int
	name string
	ops  []nameOp
	sid  uint64 // the binding to write, once decided
	seq  uint64
	err  error
	skip bool
}

type nameOp struct {
	change int
	bind   bool
	sid    uint64
}

// bucketPlan is one bucket record the group writes or deletes.
type bucketPlan struct {
	k    int
	id   string
	ops  []bucketOp
	rec  *storage.BucketRecord
	seq  uint64
	err  error
	skip bool
}

type bucketOp struct {
	change int
	rec    *storage.BucketRecord
}

// name is the plan of a name's binding, made from the binding it has on first use.
func (pl *plan) name(s *Store, name string) *namePlan {
	return planFor(pl.byName, &pl.names, name, func() *namePlan {
		k := PartitionOf(name, s.opts.Partitions)
		cur := s.parts[k].names[name]
		return &namePlan{k: k, name: name, sid: cur.SID, seq: cur.Seq}
	})
}

// bucket is the plan of a bucket's record, made from the record it has on first use.
func (pl *plan) bucket(s *Store, id string) *bucketPlan {
	return planFor(pl.byID, &pl.buckets, id, func() *bucketPlan {
		k := PartitionOfBucket(id, s.opts.Partitions)
		cur := s.parts[k].buckets[id]
		return &bucketPlan{k: k, id: id, rec: cur.Rec, seq: cur.Seq}
	})
}

// planFor returns the entry of key in by; on first use it makes one with create and
// appends it to list too (phase 2 writes them in first-use order).
func planFor[T any](by map[string]*T, list *[]*T, key string, create func() *T) *T {
	if v := by[key]; v != nil {
		return v
	}
	v := create()
	by[key] = v
	*list = append(*list, v)
	return v
}

// decidePhase2 folds the name and bucket operations of the changes that succeeded so far
// into the binding and record to write; unchanged ones are skipped.
func (s *Store) decidePhase2(pl *plan, errs []error) {
	for _, n := range pl.names {
		sid := n.sid
		kept := n.ops[:0]
		for _, op := range n.ops {
			if errs[op.change] != nil {
				continue
			}
			kept = append(kept, op)
			switch {
			case op.bind:
				sid = op.sid
			case sid == op.sid:
				sid = 0
			}
		}
		n.ops = kept
		n.skip = sid == n.sid
		n.sid = sid
	}
	for _, b := range pl.buckets {
		kept := b.ops[:0]
		rec, changed := b.rec, false
		for _, op := range b.ops {
			if errs[op.change] == nil {
				kept = append(kept, op)
				rec, changed = op.rec, true
			}
		}
		b.ops, b.rec, b.skip = kept, rec, !changed
	}
}

// nameMsg is the payload on a name's subject; bucketMsg on a bucket's.
type nameMsg struct {
	Name string `json:"name"`
	SID  uint64 `json:"sid"`
}

type bucketMsg struct {
	ID  string                `json:"id"`
	Rec *storage.BucketRecord `json:"rec"`
}

// publishName writes the decided binding with a compare-and-set on the name's subject.
func (s *Store) publishName(n *namePlan) {
	if n.skip {
		return
	}
	if s.noNames {
		n.err = errors.New("jsstore: test: name bindings fail")
		return
	}
	data, _ := json.Marshal(nameMsg{Name: n.name, SID: n.sid})
	n.seq, n.err = s.publish(pub{k: n.k, subj: s.nameSubj(n.k, n.name), data: data, cas: true, expect: n.seq, rollup: true})
}

// publishBucket writes the decided bucket record (nil: deleted) likewise.
func (s *Store) publishBucket(b *bucketPlan) {
	if b.skip {
		return
	}
	data, _ := json.Marshal(bucketMsg{ID: b.id, Rec: b.rec})
	b.seq, b.err = s.publish(pub{k: b.k, subj: s.bucketSubj(b.k, b.id), data: data, cas: true, expect: b.seq, rollup: true})
}

// applyNames folds the acknowledged bindings and bucket records in.
func (s *Store) applyNames(pl *plan) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range pl.names {
		if p := s.parts[n.k]; p != nil && n.err == nil && !n.skip {
			p.names[n.name] = binding{SID: n.sid, Seq: n.seq}
		}
	}
	for _, b := range pl.buckets {
		if p := s.parts[b.k]; p != nil && b.err == nil && !b.skip {
			p.buckets[b.id] = bucketEntry{Rec: b.rec, Seq: b.seq}
		}
	}
}
