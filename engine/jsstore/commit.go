package jsstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/dsd-project/dsd/engine/storage"
)

// plan is a group laid out as publications: one frame per incarnation (phase 1), then
// name bindings and bucket records (phase 2).
type plan struct {
	frames  []*framePlan
	bySID   map[uint64]*framePlan
	names   []*namePlan
	byName  map[string]*namePlan
	buckets []*bucketPlan
	byID    map[string]*bucketPlan
	created map[uint64]int // partition of each sid the group binds
}

type framePlan struct {
	k       int
	sid     uint64
	h       head
	data    []byte
	changes []int
	seq     uint64
	err     error
}

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

// Commit publishes the group (see the package doc) and reports per change: nil once
// every publication it needs is acknowledged (fsynced on a quorum), storage.ErrConflict,
// storage.ErrUnknown, ErrNotOwned, or a store failure.
func (s *Store) Commit(group []storage.Change) []error {
	errs := make([]error, len(group))
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	s.mu.RLock()
	closed, fault := s.closed, s.fault
	s.mu.RUnlock()
	if closed {
		return fill(errs, ErrClosed)
	}
	if fault != nil {
		if err := fault(); err != nil {
			return fill(errs, err)
		}
	}
	pl := s.plan(group, errs)
	s.run(len(pl.frames), func(i int) { s.publishFrame(pl.frames[i]) })
	for _, f := range pl.frames {
		failChanges(errs, f.changes, f.err)
	}
	s.decidePhase2(pl, errs)
	s.run(len(pl.names)+len(pl.buckets), func(i int) {
		if i < len(pl.names) {
			s.publishName(pl.names[i])
		} else {
			s.publishBucket(pl.buckets[i-len(pl.names)])
		}
	})
	for _, n := range pl.names {
		for _, op := range n.ops {
			failChanges(errs, []int{op.change}, n.err)
		}
	}
	for _, b := range pl.buckets {
		for _, op := range b.ops {
			failChanges(errs, []int{op.change}, b.err)
		}
	}
	s.applyPlan(pl)
	s.afterCommit(pl)
	return errs
}

func fill(errs []error, err error) []error {
	for i := range errs {
		errs[i] = err
	}
	return errs
}

func failChanges(errs []error, changes []int, err error) {
	if err == nil {
		return
	}
	for _, i := range changes {
		if errs[i] == nil {
			errs[i] = err
		}
	}
}

// run calls fn(0..n-1) concurrently, at most 64 at a time.
func (s *Store) run(n int, fn func(i int)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			fn(i)
		}()
	}
	wg.Wait()
}

// plan lays the group out; a change touching a partition that is not open fails with
// ErrNotOwned before anything is published.
func (s *Store) plan(group []storage.Change, errs []error) *plan {
	pl := &plan{bySID: map[uint64]*framePlan{}, byName: map[string]*namePlan{},
		byID: map[string]*bucketPlan{}, created: map[uint64]int{}}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for i := range group {
		c := &group[i]
		if err := s.resolve(pl, c); err != nil {
			errs[i] = err
			continue
		}
		if c.SID != 0 && ownParts(c) {
			f := pl.frame(s, c.SID)
			addChange(&f.h, &f.data, c)
			f.note(i)
		}
		for _, m := range c.Also {
			f := pl.frame(s, m.ID)
			f.h.Parts = append(f.h.Parts, part{Meta: m, At: len(f.data)})
			f.note(i)
		}
		for _, u := range c.Unbind {
			f := pl.frame(s, u.SID)
			f.h.Parts = append(f.h.Parts, part{Delete: true, At: len(f.data)})
			f.note(i)
		}
		if b := c.Bind; b != nil {
			pl.name(s, b.Name).ops = append(pl.name(s, b.Name).ops, nameOp{change: i, bind: true, sid: b.SID})
		}
		for _, u := range c.Unbind {
			pl.name(s, u.Name).ops = append(pl.name(s, u.Name).ops, nameOp{change: i, sid: u.SID})
		}
		if b := c.Bucket; b != nil {
			bp := pl.bucket(s, b.ID)
			bp.ops = append(bp.ops, bucketOp{change: i, rec: b.Record})
		}
	}
	return pl
}

// resolve checks that every partition c touches is open here (s.mu is held) and notes
// the partition of a sid it binds.
func (s *Store) resolve(pl *plan, c *storage.Change) error {
	if b := c.Bind; b != nil {
		k := PartitionOf(b.Name, s.opts.Partitions)
		p := s.parts[k]
		if p == nil {
			return ErrNotOwned
		}
		if _, taken := p.incs[b.SID]; taken {
			return fmt.Errorf("%w: stream id %d is taken in partition %d", storage.ErrConflict, b.SID, k)
		}
		pl.created[b.SID] = k
	}
	sids := []uint64{}
	if c.SID != 0 && ownParts(c) {
		sids = append(sids, c.SID)
	}
	for _, m := range c.Also {
		sids = append(sids, m.ID)
	}
	for _, u := range c.Unbind {
		sids = append(sids, u.SID)
		if s.parts[PartitionOf(u.Name, s.opts.Partitions)] == nil {
			return ErrNotOwned
		}
	}
	for _, sid := range sids {
		if _, ok := pl.partOf(s, sid); !ok {
			return fmt.Errorf("%w: stream id %d", ErrNotOwned, sid)
		}
	}
	if b := c.Bucket; b != nil && s.parts[PartitionOfBucket(b.ID, s.opts.Partitions)] == nil {
		return ErrNotOwned
	}
	return nil
}

func ownParts(c *storage.Change) bool {
	return c.Bind != nil || c.PutSnapshot != nil || c.DropSnapshot != nil || len(c.Messages) > 0 ||
		c.Producer != nil || c.Retained || c.Meta != nil
}

func (pl *plan) partOf(s *Store, sid uint64) (int, bool) {
	if k, ok := pl.created[sid]; ok {
		return k, true
	}
	k, ok := s.sidPart[sid]
	return k, ok && s.parts[k] != nil
}

func (pl *plan) frame(s *Store, sid uint64) *framePlan {
	if f := pl.bySID[sid]; f != nil {
		return f
	}
	k, _ := pl.partOf(s, sid)
	f := &framePlan{k: k, sid: sid}
	pl.bySID[sid] = f
	pl.frames = append(pl.frames, f)
	return f
}

func (f *framePlan) note(i int) {
	if n := len(f.changes); n == 0 || f.changes[n-1] != i {
		f.changes = append(f.changes, i)
	}
}

func (pl *plan) name(s *Store, name string) *namePlan {
	if n := pl.byName[name]; n != nil {
		return n
	}
	k := PartitionOf(name, s.opts.Partitions)
	cur := s.parts[k].names[name]
	n := &namePlan{k: k, name: name, sid: cur.SID, seq: cur.Seq}
	pl.byName[name] = n
	pl.names = append(pl.names, n)
	return n
}

func (pl *plan) bucket(s *Store, id string) *bucketPlan {
	if b := pl.byID[id]; b != nil {
		return b
	}
	k := PartitionOfBucket(id, s.opts.Partitions)
	cur := s.parts[k].buckets[id]
	b := &bucketPlan{k: k, id: id, rec: cur.Rec, seq: cur.Seq}
	pl.byID[id] = b
	pl.buckets = append(pl.buckets, b)
	return b
}

// publishFrame publishes f's chunks (when it is too large for one message) and then the
// frame with its compare-and-set.
func (s *Store) publishFrame(f *framePlan) {
	s.mu.RLock()
	var expect uint64
	if in := s.parts[f.k].incs[f.sid]; in != nil {
		expect = in.Seq
	}
	s.mu.RUnlock()
	body := encodeFrame(&f.h, f.data)
	subj := s.logSubj(f.k, f.sid)
	if len(body) > s.opts.ChunkBytes {
		outer := head{Size: len(body)}
		for at := 0; at < len(body); at += s.opts.ChunkBytes {
			seq, err := s.publish(pub{k: f.k, subj: subj + ".c", data: body[at:min(at+s.opts.ChunkBytes, len(body))]})
			if err != nil {
				f.err = err
				return
			}
			outer.Chunks = append(outer.Chunks, seq)
		}
		body = encodeFrame(&outer, nil)
	}
	f.seq, f.err = s.publish(pub{k: f.k, subj: subj, data: body, cas: true, expect: expect})
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

type nameMsg struct {
	Name string `json:"name"`
	SID  uint64 `json:"sid"`
}

type bucketMsg struct {
	ID  string                `json:"id"`
	Rec *storage.BucketRecord `json:"rec"`
}

func (s *Store) publishName(n *namePlan) {
	if n.skip {
		return
	}
	data, _ := json.Marshal(nameMsg{Name: n.name, SID: n.sid})
	n.seq, n.err = s.publish(pub{k: n.k, subj: s.nameSubj(n.k, n.name), data: data, cas: true, expect: n.seq, rollup: true})
}

func (s *Store) publishBucket(b *bucketPlan) {
	if b.skip {
		return
	}
	data, _ := json.Marshal(bucketMsg{ID: b.id, Rec: b.rec})
	b.seq, b.err = s.publish(pub{k: b.k, subj: s.bucketSubj(b.k, b.id), data: data, cas: true, expect: b.seq, rollup: true})
}

// applyPlan folds what was acknowledged into the open partitions.
func (s *Store) applyPlan(pl *plan) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range pl.frames {
		p := s.parts[f.k]
		if f.err != nil || p == nil {
			continue
		}
		in := p.incs[f.sid]
		if in == nil {
			in = newInc(f.sid)
			p.incs[f.sid] = in
			s.sidPart[f.sid] = f.k
			p.lastSID = max(p.lastSID, f.sid)
		}
		fr := &frame{seq: f.seq, head: f.h, data: f.data}
		in.apply(fr, s.opts.IndexBytes)
		s.frames.put(f.k, fr)
	}
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

// afterCommit reloads what lost its compare-and-set or stayed in doubt, tells
// OnConflict, and rewrites the checkpoints that are due.
func (s *Store) afterCommit(pl *plan) {
	conflicted := map[int]bool{}
	for _, f := range pl.frames {
		if storage.PerStream(f.err) {
			s.reloadInc(f.k, f.sid)
			conflicted[f.k] = conflicted[f.k] || errors.Is(f.err, storage.ErrConflict)
		} else if f.err == nil {
			s.maybeCheckpoint(f.k, f.sid)
		}
	}
	for _, n := range pl.names {
		if storage.PerStream(n.err) {
			s.reloadName(n.k, n.name)
			conflicted[n.k] = conflicted[n.k] || errors.Is(n.err, storage.ErrConflict)
		}
	}
	for _, b := range pl.buckets {
		if storage.PerStream(b.err) {
			s.reloadBucket(b.k, b.id)
			conflicted[b.k] = conflicted[b.k] || errors.Is(b.err, storage.ErrConflict)
		}
	}
	for k, c := range conflicted {
		if !c {
			continue
		}
		s.mu.Lock()
		if p := s.parts[k]; p != nil {
			p.conflicts++
		}
		s.mu.Unlock()
		if s.opts.OnConflict != nil {
			s.opts.OnConflict(k)
		}
	}
}
