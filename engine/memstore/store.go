// Package memstore is an in-memory storage.Backend: the fast backend of tests, and a test
// double that injects storage failures (SetFault). A Store's state outlives Close:
// Reopen returns a new handle on it, which is what a restart is for a data file.
package memstore

import (
	"errors"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/dsd-project/dsd/engine/storage"
	"github.com/dsd-project/dsd/model"
)

// ErrClosed is returned by every call on a closed handle.
var ErrClosed = errors.New("memstore: closed")

// ErrApplied, wrapped in a fault's error for "commit", makes the group fail after it was
// applied: a write that landed although its sync failed.
var ErrApplied = errors.New("memstore: applied, then failed")

// Fault decides whether one storage call fails (tests). what is "commit" (asked once per
// change, with the change), "probe", "collect" or "trim" (c nil). A per-stream error
// (storage.ErrConflict, storage.ErrUnknown) fails that change and the later changes of
// its stream in the group; any other error fails the whole group, which applies nothing
// (unless it wraps ErrApplied).
type Fault func(what string, c *storage.Change) error

// Store is a handle on in-memory stream state.
type Store struct {
	d      *state
	closed bool
}

type state struct {
	mu      sync.RWMutex
	lastSID uint64
	names   map[string]uint64
	metas   map[uint64]*storage.Meta
	incs    map[uint64]*incarnation
	buckets map[string]storage.BucketRecord
	trash   map[uint64]bool
	trims   map[uint64]bool
	kv      map[string]map[string][]byte // subscription key spaces (storage.Space*)
	fault   Fault
}

// incarnation is the stored data of one sid.
type incarnation struct {
	offs  []uint64 // message offsets, ascending
	vals  map[uint64][]byte
	recs  map[uint64]uint64 // ordinal -> offset
	recHi uint64            // last ordinal + 1
	prods map[string]*storage.ProducerState
	rcpts map[rcptKey]storage.Receipt
	snaps map[uint64][]byte
}

type rcptKey struct {
	id         string
	epoch, seq uint64
}

var _ storage.Backend = (*Store)(nil)

// New returns an empty store.
func New() *Store {
	return &Store{d: &state{names: map[string]uint64{}, metas: map[uint64]*storage.Meta{},
		incs: map[uint64]*incarnation{}, buckets: map[string]storage.BucketRecord{},
		kv:    map[string]map[string][]byte{},
		trash: map[uint64]bool{}, trims: map[uint64]bool{}}}
}

// Reopen returns a new open handle on the same state (a restart).
func (s *Store) Reopen() *Store { return &Store{d: s.d} }

// SetFault installs f (nil removes it); it applies to every handle on the state.
func (s *Store) SetFault(f Fault) {
	s.d.mu.Lock()
	s.d.fault = f
	s.d.mu.Unlock()
}

// Path names the store.
func (s *Store) Path() string { return "memory" }

// Close closes the handle; the state stays for Reopen.
func (s *Store) Close() error {
	s.d.mu.Lock()
	s.closed = true
	s.d.mu.Unlock()
	return nil
}

// read runs fn under the read lock unless the handle is closed.
func (s *Store) read(fn func(d *state) error) error {
	s.d.mu.RLock()
	defer s.d.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	return fn(s.d)
}

// write runs fn under the write lock unless the handle is closed or the fault hook
// fails what.
func (s *Store) write(what string, fn func(d *state) error) error {
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if f := s.d.fault; f != nil {
		if err := f(what, nil); err != nil {
			return err
		}
	}
	return fn(s.d)
}

func (d *state) inc(sid uint64) *incarnation {
	in, ok := d.incs[sid]
	if !ok {
		in = &incarnation{vals: map[uint64][]byte{}, recs: map[uint64]uint64{},
			prods: map[string]*storage.ProducerState{}, rcpts: map[rcptKey]storage.Receipt{},
			snaps: map[uint64][]byte{}}
		d.incs[sid] = in
	}
	return in
}

// meta returns a copy of sid's meta with the derivable fields brought up to date from
// the data, as a data file's loading does; nil when none.
func (d *state) meta(sid uint64) *storage.Meta {
	sm, ok := d.metas[sid]
	if !ok {
		return nil
	}
	m := *sm
	if in, ok := d.incs[sid]; ok {
		if n := len(in.offs); n > 0 {
			last := in.offs[n-1]
			m.Tail = max(m.Tail, last+uint64(len(in.vals[last])-1))
		}
		m.RecordNext = max(m.RecordNext, in.recHi)
	}
	return &m
}

// LastSID returns the last stream id handed out.
func (s *Store) LastSID() (sid uint64, err error) {
	err = s.read(func(d *state) error { sid = d.lastSID; return nil })
	return sid, err
}

// Stream returns the meta bound to name.
func (s *Store) Stream(name string) (m *storage.Meta, err error) {
	err = s.read(func(d *state) error {
		if sid, ok := d.names[name]; ok {
			m = d.meta(sid)
		}
		return nil
	})
	return m, err
}

// Incarnation returns sid's meta and whether its name is bound to it.
func (s *Store) Incarnation(sid uint64) (m *storage.Meta, bound bool, err error) {
	err = s.read(func(d *state) error {
		if m = d.meta(sid); m != nil {
			bound = d.names[m.Key()] == sid
		}
		return nil
	})
	return m, bound, err
}

// SnapshotOf returns sid's meta and its visible snapshot's body.
func (s *Store) SnapshotOf(sid uint64) (m *storage.Meta, body []byte, err error) {
	err = s.read(func(d *state) error {
		if m = d.meta(sid); m != nil && m.Snapshot != nil {
			body = d.snapshot(sid, m.Snapshot.Offset)
		}
		return nil
	})
	return m, body, err
}

// SnapshotBody returns the body stored for sid at off.
func (s *Store) SnapshotBody(sid, off uint64) (body []byte, err error) {
	err = s.read(func(d *state) error { body = d.snapshot(sid, off); return nil })
	return body, err
}

func (d *state) snapshot(sid, off uint64) []byte {
	if in, ok := d.incs[sid]; ok {
		if b, ok := in.snaps[off]; ok {
			return append([]byte{}, b...)
		}
	}
	return nil
}

// Messages visits whole messages in [start, tail) across segs within lim.
func (s *Store) Messages(segs []storage.Segment, start, tail uint64, lim storage.Limits, visit func(off uint64, val []byte)) error {
	return s.read(func(d *state) error {
		taken, size := 0, 0
		first := true
		for _, sg := range segs {
			if sg.To <= start {
				continue
			}
			from := max(start, sg.From)
			in := d.incs[sg.SID]
			var offs []uint64
			if in != nil {
				offs = in.offs
			}
			i := sort.Search(len(offs), func(i int) bool { return offs[i] >= from })
			if first && (i == len(offs) || offs[i] != from) {
				return model.ErrOffsetNotBoundary
			}
			first = false
			for ; i < len(offs) && offs[i] < sg.To && offs[i] < tail; i++ {
				val := in.vals[offs[i]]
				if !lim.Allows(taken, size, len(val)-1) {
					return nil
				}
				if visit != nil {
					visit(offs[i], val)
				}
				taken++
				size += len(val) - 1
			}
		}
		return nil
	})
}

// MessageAt returns the message of segs that holds off.
func (s *Store) MessageAt(segs []storage.Segment, off uint64) (start uint64, val []byte, err error) {
	err = s.read(func(d *state) error {
		for _, sg := range segs {
			in := d.incs[sg.SID]
			if off < sg.From || off >= sg.To || in == nil {
				continue
			}
			i := sort.Search(len(in.offs), func(i int) bool { return in.offs[i] > off }) - 1
			if i < 0 || in.offs[i] < sg.From {
				break
			}
			if v := in.vals[in.offs[i]]; in.offs[i]+uint64(len(v)-1) > off {
				start, val = in.offs[i], slices.Clone(v)
				return nil
			}
			break
		}
		return model.ErrOffsetNotBoundary
	})
	return start, val, err
}

// RecordOffset returns the offset of record r of sid.
func (s *Store) RecordOffset(sid, r uint64) (off uint64, ok bool, err error) {
	err = s.read(func(d *state) error {
		if in := d.incs[sid]; in != nil {
			off, ok = in.recs[r]
		}
		return nil
	})
	return off, ok, err
}

// OrdinalAt returns the first record in [lo, hi) of sid at or after off.
func (s *Store) OrdinalAt(sid, lo, hi, off uint64) (rec uint64, err error) {
	err = s.read(func(d *state) error {
		in := d.incs[sid]
		i := sort.Search(int(hi-lo), func(i int) bool {
			if in == nil {
				return true
			}
			o, ok := in.recs[lo+uint64(i)]
			return !ok || o >= off
		})
		rec = lo + uint64(i)
		return nil
	})
	return rec, err
}

// Producer returns a producer's stored state.
func (s *Store) Producer(sid uint64, id string) (st *storage.ProducerState, err error) {
	err = s.read(func(d *state) error {
		if in := d.incs[sid]; in != nil && in.prods[id] != nil {
			c := *in.prods[id]
			c.Receipts = append([]storage.Receipt(nil), c.Receipts...)
			st = &c
		}
		return nil
	})
	return st, err
}

// Receipt returns the stored acknowledgement of p's (epoch, seq).
func (s *Store) Receipt(sid uint64, p model.Producer) (r storage.Receipt, ok bool, err error) {
	err = s.read(func(d *state) error {
		if in := d.incs[sid]; in != nil {
			r, ok = in.rcpts[rcptKey{p.ID, p.Epoch, p.Seq}]
		}
		return nil
	})
	return r, ok, err
}

// Names visits bound names with prefix from seek, in byte order.
func (s *Store) Names(prefix, seek string, visit func(name string, m *storage.Meta) bool) error {
	type entry struct {
		name string
		m    *storage.Meta
	}
	var list []entry
	err := s.read(func(d *state) error {
		for name, sid := range d.names {
			if strings.HasPrefix(name, prefix) && name >= seek {
				if m := d.meta(sid); m != nil {
					list = append(list, entry{name, m})
				}
			}
		}
		return nil
	})
	sort.Slice(list, func(i, j int) bool { return list[i].name < list[j].name })
	for _, e := range list {
		if !visit(e.name, e.m) {
			break
		}
	}
	return err
}

// Bucket returns a bucket's record.
func (s *Store) Bucket(id string) (rec *storage.BucketRecord, err error) {
	err = s.read(func(d *state) error {
		if r, ok := d.buckets[id]; ok {
			rec = &r
		}
		return nil
	})
	return rec, err
}
