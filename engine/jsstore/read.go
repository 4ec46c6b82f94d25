package jsstore

import (
	"bytes"
	"context"
	"sort"
	"strings"

	"github.com/dsd-project/dsd/engine/storage"
	"github.com/dsd-project/dsd/model"
)

// lookup returns sid's partition number and state (nil when not loaded here). s.mu is
// held.
func (s *Store) lookup(sid uint64) (int, *inc) {
	k, ok := s.sidPart[sid]
	if !ok || s.parts[k] == nil {
		return 0, nil
	}
	return k, s.parts[k].incs[sid]
}

func (s *Store) readCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), s.opts.ResolveTimeout)
}

// LastSID returns the highest stream id of the open partitions, at least SIDFloor.
func (s *Store) LastSID() (uint64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return 0, ErrClosed
	}
	sid := s.opts.SIDFloor
	for _, p := range s.parts {
		sid = max(sid, p.lastSID)
	}
	return sid, nil
}

// Stream returns the meta bound to name. Errors: ErrNotOwned when name's partition is
// not open here.
func (s *Store) Stream(name string) (*storage.Meta, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, ErrClosed
	}
	p := s.parts[PartitionOf(name, s.opts.Partitions)]
	if p == nil {
		return nil, ErrNotOwned
	}
	return p.live(p.names[name]).meta(), nil
}

// Incarnation returns sid's meta and whether its name is still bound to it.
func (s *Store) Incarnation(sid uint64) (*storage.Meta, bool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, false, ErrClosed
	}
	_, in := s.lookup(sid)
	m := in.meta()
	if m == nil {
		return nil, false, nil
	}
	p := s.parts[PartitionOf(m.Key(), s.opts.Partitions)]
	return m, p != nil && p.names[m.Key()].SID == sid, nil
}

// SnapshotOf returns sid's meta and the body of its visible snapshot.
func (s *Store) SnapshotOf(sid uint64) (*storage.Meta, []byte, error) {
	s.mu.RLock()
	k, in := s.lookup(sid)
	m := in.meta()
	var ref bodyRef
	ok := false
	if m != nil && m.Snapshot != nil {
		ref, ok = in.Snaps[m.Snapshot.Offset]
	}
	s.mu.RUnlock()
	if !ok {
		return m, nil, nil
	}
	body, err := s.body(k, ref)
	return m, body, err
}

// SnapshotBody returns the body stored for sid at off, nil when none.
func (s *Store) SnapshotBody(sid, off uint64) ([]byte, error) {
	s.mu.RLock()
	k, in := s.lookup(sid)
	var ref bodyRef
	ok := false
	if in != nil {
		ref, ok = in.Snaps[off]
	}
	s.mu.RUnlock()
	if !ok {
		return nil, nil
	}
	return s.body(k, ref)
}

func (s *Store) body(k int, ref bodyRef) ([]byte, error) {
	ctx, cancel := s.readCtx()
	defer cancel()
	f, err := s.frameAt(ctx, k, ref.Seq)
	if err != nil {
		return nil, err
	}
	return append([]byte{}, f.data[ref.At:ref.At+ref.Len]...), nil
}

// cursor is what a scan of one incarnation's log needs, copied under s.mu.
type cursor struct {
	k       int
	sid     uint64
	last    uint64 // last committed frame
	trimOff uint64
	index   []indexEntry
}

func (s *Store) cursor(sid uint64) (cursor, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	k, in := s.lookup(sid)
	if in == nil {
		return cursor{}, false
	}
	return cursor{k: k, sid: sid, last: in.Seq, trimOff: in.TrimOff, index: in.Index[:len(in.Index):len(in.Index)]}, true
}

// scan visits the messages of c's frames from index entry e on, with their ordinal
// (records) until visit returns false.
func (s *Store) scan(ctx context.Context, c cursor, e int, visit func(off, rec uint64, recs bool, val []byte) bool) error {
	if e < 0 || e >= len(c.index) {
		return nil
	}
	var stop bool
	return s.eachFrame(ctx, c.k, c.sid, c.index[e].Seq, c.last, func(f *frame) bool {
		for i := range f.head.Parts {
			p := &f.head.Parts[i]
			pos := p.msgStart()
			for j, m := range p.Msgs {
				val := f.data[pos : pos+m.Len]
				pos += m.Len
				if m.Off < c.trimOff {
					continue
				}
				if !visit(m.Off, p.Rec0+uint64(j), p.Records, val) {
					stop = true
					return false
				}
			}
		}
		return !stop
	})
}

// entryAt returns the last index entry at or before offset off (-1 when none).
func (c cursor) entryAt(off uint64) int {
	return sort.Search(len(c.index), func(i int) bool { return c.index[i].Off > off }) - 1
}

// Messages visits whole messages in [start, tail) across segs within lim: from the
// offset index entry at or before start, frames are read from the partition's leader.
func (s *Store) Messages(segs []storage.Segment, start, tail uint64, lim storage.Limits, visit func(off uint64, val []byte)) error {
	ctx, cancel := s.readCtx()
	defer cancel()
	taken, size, first := 0, 0, true
	for _, sg := range segs {
		if sg.To <= start {
			continue
		}
		from := max(start, sg.From)
		c, ok := s.cursor(sg.SID)
		e := c.entryAt(from)
		if !ok || e < 0 || (first && from < c.trimOff) {
			if first {
				return model.ErrOffsetNotBoundary
			}
			continue
		}
		found, full := false, false
		var bad bool
		err := s.scan(ctx, c, e, func(off, _ uint64, _ bool, val []byte) bool {
			if off < from {
				return true
			}
			if first && !found && off != from {
				bad = true
				return false
			}
			found = true
			if off >= sg.To || off >= tail {
				return false
			}
			if !lim.Allows(taken, size, len(val)-1) {
				full = true
				return false
			}
			if visit != nil {
				visit(off, val)
			}
			taken++
			size += len(val) - 1
			return true
		})
		switch {
		case err != nil:
			return err
		case bad || (first && !found):
			return model.ErrOffsetNotBoundary
		case full:
			return nil
		}
		first = false
	}
	return nil
}

// MessageAt returns the message of segs that holds off: from the offset index entry at
// or before off, frames are read up to the message that ends past off.
func (s *Store) MessageAt(segs []storage.Segment, off uint64) (uint64, []byte, error) {
	ctx, cancel := s.readCtx()
	defer cancel()
	for _, sg := range segs {
		if off < sg.From || off >= sg.To {
			continue
		}
		c, ok := s.cursor(sg.SID)
		e := c.entryAt(off)
		if !ok || e < 0 || off < c.trimOff {
			break
		}
		var (
			start uint64
			val   []byte
		)
		err := s.scan(ctx, c, e, func(o, _ uint64, _ bool, v []byte) bool {
			if o > off {
				return false
			}
			if o >= sg.From && o+uint64(len(v)-1) > off {
				start, val = o, bytes.Clone(v)
				return false
			}
			return true
		})
		if err != nil || val != nil {
			return start, val, err
		}
		break
	}
	return 0, nil, model.ErrOffsetNotBoundary
}

// RecordOffset returns the offset of record r of sid (extension §6.1): from the index
// entry at or before r, one page of frames is read.
func (s *Store) RecordOffset(sid, r uint64) (uint64, bool, error) {
	s.mu.RLock()
	_, in := s.lookup(sid)
	okRange := in != nil && r >= in.TrimRec && r < in.RecNext
	s.mu.RUnlock()
	if !okRange {
		return 0, false, nil
	}
	c, _ := s.cursor(sid)
	e := sort.Search(len(c.index), func(i int) bool { return !c.index[i].Recs || c.index[i].Rec > r }) - 1
	ctx, cancel := s.readCtx()
	defer cancel()
	var off uint64
	found := false
	err := s.scan(ctx, c, e, func(o, rec uint64, recs bool, _ []byte) bool {
		if recs && rec == r {
			off, found = o, true
		}
		return !found && (!recs || rec < r)
	})
	return off, found, err
}

// OrdinalAt returns the least record r in [lo, hi) of sid whose offset is at least off,
// hi when none is.
func (s *Store) OrdinalAt(sid, lo, hi, off uint64) (uint64, error) {
	if lo >= hi {
		return hi, nil
	}
	c, ok := s.cursor(sid)
	if !ok {
		return hi, nil
	}
	e := max(c.entryAt(off), 0)
	ctx, cancel := s.readCtx()
	defer cancel()
	r, found := hi, false
	err := s.scan(ctx, c, e, func(o, rec uint64, recs bool, _ []byte) bool {
		if recs && o >= off {
			r, found = rec, true
		}
		return !found
	})
	return min(max(r, lo), hi), err
}

// Producer returns producer id's stored state on sid.
func (s *Store) Producer(sid uint64, id string) (*storage.ProducerState, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, in := s.lookup(sid)
	if in == nil || in.Prods[id] == nil {
		return nil, nil
	}
	c := *in.Prods[id]
	c.Receipts = append([]storage.Receipt(nil), c.Receipts...)
	return &c, nil
}

// Receipt returns the stored acknowledgement of p's (epoch, seq) on sid. The engine asks
// only for receipts older than the ones a producer's state keeps, so this rare path scans
// the log for the frame that stored it instead of keeping every receipt in memory.
func (s *Store) Receipt(sid uint64, p model.Producer) (storage.Receipt, bool, error) {
	s.mu.RLock()
	k, in := s.lookup(sid)
	var last uint64
	if in != nil {
		last = in.Seq
	}
	s.mu.RUnlock()
	var r storage.Receipt
	found := false
	if last == 0 {
		return r, false, nil
	}
	ctx, cancel := s.readCtx()
	defer cancel()
	err := s.eachFrame(ctx, k, sid, 1, last, func(f *frame) bool {
		for _, pt := range f.head.Parts {
			if pr := pt.Producer; pr != nil && pr.ID == p.ID && pr.State.Epoch == p.Epoch && pr.Receipt != nil && pr.Receipt.Seq == p.Seq {
				r, found = *pr.Receipt, true
			}
		}
		return !found
	})
	return r, found, err
}

// Names visits the bound names of the open partitions starting with prefix, from seek,
// in byte order.
func (s *Store) Names(prefix, seek string, visit func(name string, m *storage.Meta) bool) error {
	type entry struct {
		name string
		m    *storage.Meta
	}
	var list []entry
	s.mu.RLock()
	for _, p := range s.parts {
		for name, b := range p.names {
			if strings.HasPrefix(name, prefix) && name >= seek {
				if in := p.live(b); in != nil {
					list = append(list, entry{name, in.meta()})
				}
			}
		}
	}
	s.mu.RUnlock()
	sort.Slice(list, func(i, j int) bool { return list[i].name < list[j].name })
	for _, e := range list {
		if !visit(e.name, e.m) {
			break
		}
	}
	return nil
}

// Bucket returns bucket id's record; Streams counts the names bound in it in the open
// partitions (a cluster sums the owners' counts). Errors: ErrNotOwned when the record's
// partition is not open here.
func (s *Store) Bucket(id string) (*storage.BucketRecord, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	p := s.parts[PartitionOfBucket(id, s.opts.Partitions)]
	if p == nil {
		return nil, ErrNotOwned
	}
	e := p.buckets[id]
	if e.Rec == nil {
		return nil, nil
	}
	rec := *e.Rec
	rec.Streams = 0
	for _, q := range s.parts {
		for _, b := range q.names {
			if in := q.live(b); in != nil && in.Meta.Bucket == id {
				rec.Streams++
			}
		}
	}
	return &rec, nil
}
