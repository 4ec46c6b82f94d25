package memstore

import "sort"

// Trash returns up to limit deleted incarnations still to free, by id.
func (s *Store) Trash(limit int) ([]uint64, error) {
	var out []uint64
	err := s.read(func(d *state) error { out = sortedKeys(d.trash, limit); return nil })
	return out, err
}

// Trims returns the incarnations marked for trimming, by id.
func (s *Store) Trims() ([]uint64, error) {
	var out []uint64
	err := s.read(func(d *state) error { out = sortedKeys(d.trims, 0); return nil })
	return out, err
}

func sortedKeys(m map[uint64]bool, limit int) []uint64 {
	out := make([]uint64, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}

// Collect frees up to limit items (messages, records, producers, receipts, snapshots)
// of a deleted incarnation.
func (s *Store) Collect(sid uint64, limit int) (finished bool, err error) {
	err = s.write("collect", func(d *state) error {
		in, n := d.incs[sid], 0
		if in != nil {
			for len(in.offs) > 0 && n < limit {
				delete(in.vals, in.offs[0])
				in.offs = in.offs[1:]
				n++
			}
			n = dropSome(in.recs, n, limit)
			n = dropSome(in.prods, n, limit)
			n = dropSome(in.rcpts, n, limit)
			n = dropSome(in.snaps, n, limit)
			if n >= limit {
				return nil
			}
			delete(d.incs, sid)
		}
		delete(d.trash, sid)
		finished = true
		return nil
	})
	return finished, err
}

// dropSome deletes items of m while n < limit and returns the new n.
func dropSome[K comparable, V any](m map[K]V, n, limit int) int {
	for k := range m {
		if n >= limit {
			break
		}
		delete(m, k)
		n++
	}
	return n
}

// Trim frees up to limit messages and records of sid below its retention boundary.
func (s *Store) Trim(sid uint64, limit int) (finished bool, err error) {
	err = s.write("trim", func(d *state) error {
		m := d.meta(sid)
		switch {
		case m == nil:
			delete(d.trims, sid)
			finished = true
			return nil
		case m.Refs > 0:
			finished = true
			return nil
		}
		in, n := d.inc(sid), 0
		for len(in.offs) > 0 && in.offs[0] < m.RetainedFrom {
			if n >= limit {
				return nil
			}
			delete(in.vals, in.offs[0])
			in.offs = in.offs[1:]
			n++
		}
		for r := range in.recs {
			if r < m.RecordFirst {
				if n >= limit {
					return nil
				}
				delete(in.recs, r)
				n++
			}
		}
		delete(d.trims, sid)
		finished = true
		return nil
	})
	return finished, err
}

// Probe succeeds unless the fault hook fails "probe".
func (s *Store) Probe() error {
	return s.write("probe", func(*state) error { return nil })
}
