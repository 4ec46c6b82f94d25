package boltstore

import (
	bolt "go.etcd.io/bbolt"

	"sort"

	"github.com/dsd-project/dsd/engine/storage"
	"github.com/dsd-project/dsd/model"
)

// A layer holds the groups logged since one checkpoint cut, indexed for the reads: the
// last meta of each incarnation, messages and record index entries in order, producer
// states and receipts. Only groups of append-shaped changes (logged) enter a layer; the
// others are applied to the data file directly (see Commit). The active layer grows
// under Store.mu; a frozen one (cut, being checkpointed) never changes again.
type layer struct {
	changes []storage.Change // in commit order, applied to the data file at the checkpoint
	end     logPos           // the log position after its last group
	bytes   int64            // log bytes of its groups
	metas   map[uint64]*storage.Meta
	data    map[uint64]*run // sid -> messages by offset
	recs    map[uint64]*run // sid -> record offsets by ordinal
	prods   map[prodID]*storage.ProducerState
	rcpts   map[rcptID]storage.Receipt
}

type prodID struct {
	sid uint64
	id  string
}

type rcptID struct {
	sid        uint64
	id         string
	epoch, seq uint64
}

func newLayer(end logPos) *layer {
	return &layer{end: end, metas: map[uint64]*storage.Meta{}, data: map[uint64]*run{},
		recs: map[uint64]*run{}, prods: map[prodID]*storage.ProducerState{}, rcpts: map[rcptID]storage.Receipt{}}
}

// successor returns the empty layer that follows l at a checkpoint cut, sized like l:
// the next interval logs about as many changes of as many streams, and growing the
// changes slice by doubling copied each change about twice more (issue 19).
func (l *layer) successor() *layer {
	n := newLayer(l.end)
	n.changes = make([]storage.Change, 0, len(l.changes))
	n.data = make(map[uint64]*run, len(l.data))
	return n
}

func (l *layer) empty() bool { return len(l.changes) == 0 }

// add indexes a logged group ending at end. Store.mu is held.
func (l *layer) add(group []storage.Change, end logPos, size int64) {
	l.end = end
	l.bytes += size
	for i := range group {
		c := group[i]
		l.changes = append(l.changes, c)
		sid := c.SID
		if len(c.Messages) > 0 {
			d := l.run(l.data, sid)
			for j, m := range c.Messages {
				d.put(m.Off, m.Val, 0)
				if c.Records {
					l.run(l.recs, sid).put(c.FirstRecord+uint64(j), nil, m.Off)
				}
			}
		}
		if p := c.Producer; p != nil {
			if r := p.Receipt; r != nil {
				l.rcpts[rcptID{sid, p.ID, p.State.Epoch, r.Seq}] = *r
			}
			l.prods[prodID{sid, p.ID}] = p.State
		}
		if c.Meta != nil {
			l.metas[c.Meta.ID] = c.Meta
		}
		for _, m := range c.Also {
			l.metas[m.ID] = m
		}
	}
}

func (l *layer) run(m map[uint64]*run, sid uint64) *run {
	r := m[sid]
	if r == nil {
		r = &run{}
		m[sid] = r
	}
	return r
}

// run is a sorted map from a position (offset or ordinal) to a message value or a
// record's offset: appends land at the end, anything else by binary search.
type run struct {
	pos  []uint64
	vals [][]byte // messages: flags byte | bytes
	offs []uint64 // records: the message offset
}

func (r *run) put(pos uint64, val []byte, off uint64) {
	i := len(r.pos)
	if i > 0 && r.pos[i-1] >= pos {
		i = sort.Search(len(r.pos), func(j int) bool { return r.pos[j] >= pos })
		if i < len(r.pos) && r.pos[i] == pos {
			r.set(i, val, off)
			return
		}
	}
	r.pos = append(r.pos, 0)
	copy(r.pos[i+1:], r.pos[i:])
	r.pos[i] = pos
	if val != nil {
		r.vals = append(r.vals, nil)
		copy(r.vals[i+1:], r.vals[i:])
	} else {
		r.offs = append(r.offs, 0)
		copy(r.offs[i+1:], r.offs[i:])
	}
	r.set(i, val, off)
}

func (r *run) set(i int, val []byte, off uint64) {
	if val != nil {
		r.vals[i] = val
	} else {
		r.offs[i] = off
	}
}

// find returns the index of pos, or -1.
func (r *run) find(pos uint64) int {
	if r == nil {
		return -1
	}
	i := sort.Search(len(r.pos), func(j int) bool { return r.pos[j] >= pos })
	if i < len(r.pos) && r.pos[i] == pos {
		return i
	}
	return -1
}

// view is what a read sees of the un-checkpointed groups: the layers, newest first,
// taken before the read's data-file transaction begins. A group checkpointed after the
// view was taken is then in both, with the same values; one checkpointed before is in
// the transaction. Reads of the active layer take Store.mu.
type view struct {
	s      *Store
	layers []*layer
}

// view takes the layers. A read must call it before opening its transaction.
func (s *Store) view() view {
	s.mu.RLock()
	defer s.mu.RUnlock()
	v := view{s: s, layers: make([]*layer, 0, 1+len(s.frozen))}
	if !s.active.empty() {
		v.layers = append(v.layers, s.active)
	}
	for i := len(s.frozen) - 1; i >= 0; i-- {
		v.layers = append(v.layers, s.frozen[i])
	}
	return v
}

func (v view) none() bool { return len(v.layers) == 0 }

// in returns the layers tx does not hold yet: those ending after the log position stored
// in tx. A checkpoint commits before it drops its layers, and a direct group commits with
// the checkpoint of every layer before it, so a view taken before tx began may hold
// layers tx already has, and their metas and producer states may be older than what a
// direct group of the same transaction wrote. Every read filters its view with in inside
// its transaction.
func (v view) in(tx *bolt.Tx) view {
	if v.none() {
		return v
	}
	p, ok := parseLogPos(tx.Bucket(bktSystem).Get(keyLogPos))
	if !ok {
		return v
	}
	out := view{s: v.s}
	v.read(func() { // the active layer's end moves under Store.mu
		for _, l := range v.layers {
			if l.end.seg > p.seg || (l.end.seg == p.seg && l.end.off > p.off) {
				out.layers = append(out.layers, l)
			}
		}
	})
	return out
}

// read runs f under the lock that guards the active layer.
func (v view) read(f func()) {
	if v.none() {
		return
	}
	v.s.mu.RLock()
	defer v.s.mu.RUnlock()
	f()
}

// metaOf returns the newest logged meta of sid (nil: none), the end of its logged
// messages and its logged record tail (0: none), read at one instant.
func (v view) metaOf(sid uint64) (m *storage.Meta, tail, recNext uint64) {
	v.read(func() {
		for _, l := range v.layers {
			if m == nil {
				m = l.metas[sid]
			}
			if d := l.data[sid]; d != nil && len(d.pos) > 0 {
				i := len(d.pos) - 1
				tail = max(tail, d.pos[i]+uint64(len(d.vals[i])-1))
			}
			if r := l.recs[sid]; r != nil && len(r.pos) > 0 {
				recNext = max(recNext, r.pos[len(r.pos)-1]+1)
			}
		}
	})
	return m, tail, recNext
}

// messages returns the logged messages of sid in [from, to), newest layer winning.
func (v view) messages(sid, from, to uint64) []storage.Message {
	var out []storage.Message
	v.read(func() {
		for li, l := range v.layers {
			d := l.data[sid]
			if d == nil {
				continue
			}
			i := sort.Search(len(d.pos), func(j int) bool { return d.pos[j] >= from })
			var got []storage.Message
			for ; i < len(d.pos) && d.pos[i] < to; i++ {
				got = append(got, storage.Message{Off: d.pos[i], Val: d.vals[i]})
			}
			if li == 0 {
				out = got
				continue
			}
			out = mergeMessages(out, got)
		}
	})
	return out
}

// mergeMessages merges two offset-ordered lists; newer wins on equal offsets.
func mergeMessages(newer, older []storage.Message) []storage.Message {
	if len(older) == 0 {
		return newer
	}
	if len(newer) == 0 {
		return older
	}
	out := make([]storage.Message, 0, len(newer)+len(older))
	i, j := 0, 0
	for i < len(newer) || j < len(older) {
		switch {
		case j == len(older) || (i < len(newer) && newer[i].Off < older[j].Off):
			out = append(out, newer[i])
			i++
		case i == len(newer) || older[j].Off < newer[i].Off:
			out = append(out, older[j])
			j++
		default:
			out = append(out, newer[i])
			i, j = i+1, j+1
		}
	}
	return out
}

// messageAt returns the logged message of sid with the greatest offset <= off.
func (v view) messageAt(sid, off uint64) (start uint64, val []byte, ok bool) {
	v.read(func() {
		for _, l := range v.layers {
			d := l.data[sid]
			if d == nil {
				continue
			}
			i := sort.Search(len(d.pos), func(j int) bool { return d.pos[j] > off }) - 1
			if i >= 0 && (!ok || d.pos[i] > start) {
				start, val, ok = d.pos[i], d.vals[i], true
			}
		}
	})
	return start, val, ok
}

// record returns the logged offset of record r of sid.
func (v view) record(sid, r uint64) (off uint64, ok bool) {
	v.read(func() {
		for _, l := range v.layers {
			if rr := l.recs[sid]; rr != nil {
				if i := rr.find(r); i >= 0 {
					off, ok = rr.offs[i], true
					return
				}
			}
		}
	})
	return off, ok
}

func (v view) producer(sid uint64, id string) (st *storage.ProducerState) {
	v.read(func() {
		for _, l := range v.layers {
			if st = l.prods[prodID{sid, id}]; st != nil {
				return
			}
		}
	})
	return st
}

func (v view) receipt(sid uint64, p model.Producer) (r storage.Receipt, ok bool) {
	v.read(func() {
		for _, l := range v.layers {
			if r, ok = l.rcpts[rcptID{sid, p.ID, p.Epoch, p.Seq}]; ok {
				return
			}
		}
	})
	return r, ok
}
