package jsstore

import (
	"errors"
	"fmt"
	"sync"

	"github.com/dsd-project/dsd/engine/storage"
)

// plan is a group laid out as publications: one frame per incarnation (phase 1), then
// the further metas of the changes that succeeded (phase 1b), the subscription journals
// (kv), then name bindings and bucket records (phase 2).
type plan struct {
	frames  []*framePlan
	also    []alsoPart       // metas of further incarnations: published after the frames
	metaBy  map[uint64][]int // the changes whose own part sets a sid's meta
	bySID   map[uint64]*framePlan
	names   []*namePlan
	byName  map[string]*namePlan
	buckets []*bucketPlan
	byID    map[string]*bucketPlan
	created map[uint64]int // partition of each sid the group binds
	kv      *kvPlan
}

// alsoPart is a change's meta of a further incarnation (a fork source's reference
// count). It is published only once the change's own frames are acknowledged, so a
// failure leaves a count too high (the source kept), never too low.
type alsoPart struct {
	change int
	meta   *storage.Meta
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

// Commit publishes the group (see the package doc) and reports per change: nil once
// every publication it needs is acknowledged (fsynced on a quorum), storage.ErrConflict,
// storage.ErrUnknown, ErrNotOwned, or a store failure.
func (s *Store) Commit(group []storage.Change) []error {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	return s.commitLocked(group)
}

// commitLocked is Commit with commitMu held.
func (s *Store) commitLocked(group []storage.Change) []error {
	errs := make([]error, len(group))
	if len(group) == 0 {
		return errs
	}
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
	if s.kvPending() {
		if err := s.settleKV(); err != nil {
			failSubs(group, errs, err)
		}
	}
	pl := s.plan(group, errs)
	s.publishFrames(pl.frames, errs)
	s.applyFramedKV(pl)
	also := s.alsoFrames(pl, errs)
	s.publishFrames(also, errs)
	pl.frames = append(pl.frames, also...)
	s.publishJournals(pl, errs)
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
	s.applyNames(pl)
	if s.kvPending() {
		_ = s.settleKV() // committed already; what fails stays pending, retried next time
	}
	s.afterCommit(pl)
	return errs
}

// publishFrames publishes frames concurrently, fails their changes on error and folds
// the acknowledged ones in.
func (s *Store) publishFrames(frames []*framePlan, errs []error) {
	s.run(len(frames), func(i int) { s.publishFrame(frames[i]) })
	for _, f := range frames {
		failChanges(errs, f.changes, f.err)
	}
	s.applyFrames(frames)
}

// alsoFrames lays out the further metas of the changes that have not failed, one frame
// per incarnation. A meta that a later change of the group set again (and committed)
// already holds this one's effect, and is not written over by it.
func (s *Store) alsoFrames(pl *plan, errs []error) []*framePlan {
	by := map[uint64]*framePlan{}
	var out []*framePlan
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, a := range pl.also {
		if errs[a.change] != nil || supersededMeta(pl.metaBy[a.meta.ID], a.change, errs) {
			continue
		}
		f := by[a.meta.ID]
		if f == nil {
			k, _ := pl.partOf(s, a.meta.ID)
			f = &framePlan{k: k, sid: a.meta.ID}
			by[a.meta.ID] = f
			out = append(out, f)
		}
		f.h.Parts = append(f.h.Parts, part{Meta: a.meta, At: len(f.data)})
		f.note(a.change)
	}
	return out
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
	pl := &plan{bySID: map[uint64]*framePlan{}, byName: map[string]*namePlan{}, metaBy: map[uint64][]int{},
		byID: map[string]*bucketPlan{}, created: map[uint64]int{}, kv: newKVPlan()}
	s.mu.Lock() // planKV may rebuild a space's sorted keys
	defer s.mu.Unlock()
	for i := range group {
		c := &group[i]
		if errs[i] != nil { // refused before planning (settleKV)
			continue
		}
		if err := s.resolve(pl, c); err != nil {
			if errors.Is(err, ErrNotOwned) {
				err = fmt.Errorf("%w: %w", storage.ErrConflict, err)
			}
			errs[i] = err
			continue
		}
		if c.Meta != nil {
			pl.metaBy[c.SID] = append(pl.metaBy[c.SID], i)
		}
		if c.SID != 0 && ownParts(c) {
			f := pl.frame(s, c.SID)
			addChange(&f.h, &f.data, c)
			f.note(i)
		}
		if len(c.Subs) > 0 {
			s.planKV(pl, i, c)
		}
		for _, m := range c.Also {
			pl.also = append(pl.also, alsoPart{change: i, meta: m})
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
		if _, taken := s.sidPart[b.SID]; taken {
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
	for _, u := range c.Subs {
		if s.parts[s.kvPartition(u.Space, u.Key)] == nil {
			return fmt.Errorf("%w: the partition of %s key %q", ErrNotOwned, u.Space, u.Key)
		}
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

func supersededMeta(writers []int, change int, errs []error) bool {
	for _, j := range writers {
		if j > change && errs[j] == nil {
			return true
		}
	}
	return false
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

// applyFrames folds the acknowledged frames into the open partitions.
func (s *Store) applyFrames(frames []*framePlan) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range frames {
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
}

// afterCommit reloads what lost its compare-and-set or stayed in doubt, tells
// OnConflict, and rewrites the checkpoints that are due.
func (s *Store) afterCommit(pl *plan) {
	conflicted := map[int]bool{}
	var done []*framePlan
	seen := map[uint64]bool{}
	for _, f := range pl.frames {
		if storage.PerStream(f.err) {
			s.reloadInc(f.k, f.sid)
			conflicted[f.k] = conflicted[f.k] || errors.Is(f.err, storage.ErrConflict)
		} else if f.err == nil && !seen[f.sid] {
			seen[f.sid] = true
			done = append(done, f)
		}
	}
	if !s.kvPending() { // a checkpoint must not hide a frame whose records are pending
		s.run(len(done), func(i int) { s.maybeCheckpoint(done[i].k, done[i].sid) })
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
