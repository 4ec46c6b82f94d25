package memstore

import (
	"errors"

	"github.com/dsd-project/dsd/engine/storage"
)

// Commit applies the group in order. The fault hook is asked about every change first:
// a store failure fails the whole group, a per-stream failure that change and its
// stream's later changes; nothing else fails.
func (s *Store) Commit(group []storage.Change) []error {
	errs := make([]error, len(group))
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	if s.closed {
		return fill(errs, ErrClosed)
	}
	failed := map[uint64]error{}
	if f := s.d.fault; f != nil {
		for i := range group {
			c := &group[i]
			if err, ok := failed[c.SID]; ok && c.SID != 0 {
				errs[i] = err
				continue
			}
			err := f("commit", c)
			switch {
			case err == nil:
			case storage.PerStream(err):
				errs[i], failed[c.SID] = err, err
			case errors.Is(err, ErrApplied):
				for i := range group {
					s.d.apply(&group[i])
				}
				return fill(errs, err)
			default:
				return fill(errs, err)
			}
		}
	}
	for i := range group {
		if errs[i] == nil {
			s.d.apply(&group[i])
		}
	}
	return errs
}

func fill(errs []error, err error) []error {
	for i := range errs {
		errs[i] = err
	}
	return errs
}

func (d *state) apply(c *storage.Change) {
	sid := c.SID
	if b := c.Bind; b != nil {
		d.names[b.Name] = b.SID
		d.lastSID = b.SID
		d.countStream(b.Bucket, 1)
	}
	if p := c.PutSnapshot; p != nil {
		d.inc(sid).snaps[p.Offset] = append([]byte{}, p.Body...)
	}
	if off := c.DropSnapshot; off != nil {
		delete(d.inc(sid).snaps, *off)
	}
	if len(c.Messages) > 0 {
		in := d.inc(sid)
		for i, m := range c.Messages {
			if _, ok := in.vals[m.Off]; !ok {
				in.offs = append(in.offs, m.Off)
			}
			in.vals[m.Off] = m.Val
			if c.Records {
				r := c.FirstRecord + uint64(i)
				in.recs[r] = m.Off
				in.recHi = max(in.recHi, r+1)
			}
		}
	}
	if p := c.Producer; p != nil {
		in := d.inc(sid)
		in.prods[p.ID] = p.State
		if r := p.Receipt; r != nil {
			in.rcpts[rcptKey{p.ID, p.State.Epoch, r.Seq}] = *r
		}
	}
	if c.Retained {
		d.trims[sid] = true
	}
	if c.Meta != nil {
		d.metas[c.Meta.ID] = c.Meta
	}
	for _, m := range c.Also {
		d.metas[m.ID] = m
	}
	for _, u := range c.Unbind {
		if d.names[u.Name] == u.SID {
			delete(d.names, u.Name)
			d.countStream(u.Bucket, -1)
		}
		delete(d.metas, u.SID)
		d.trash[u.SID] = true
	}
	if b := c.Bucket; b != nil {
		if b.Record == nil {
			delete(d.buckets, b.ID)
		} else {
			d.buckets[b.ID] = *b.Record
		}
	}
	for _, kv := range c.Subs {
		d.applyKV(kv)
	}
}

func (d *state) countStream(bucket string, delta int) {
	if r, ok := d.buckets[bucket]; ok {
		r.Streams = max(r.Streams+delta, 0)
		d.buckets[bucket] = r
	}
}
