package engine

import (
	"sort"

	bolt "go.etcd.io/bbolt"

	"github.com/dsd-project/dsd/model"
)

// fromHeld reads from o, a position inside a message: allowed only on text streams at
// the held position where SSE stopped before an incomplete UTF-8 sequence (D9,
// model.HeldPosition); the read is the rest of that message and the messages after it,
// at least one when there are any. Else model.ErrOffsetNotBoundary.
func (e *Engine) fromHeld(s *stream, v *streamMeta, o uint64, lim limits) (span, error) {
	if !model.IsTextual(v.MediaType) || v.isJSON() {
		return span{}, model.ErrOffsetNotBoundary
	}
	b, msg, err := e.containing(s, v, o)
	if err != nil {
		return span{}, err
	}
	if !model.HeldPosition(msg, int(o-b)) {
		return span{}, model.ErrOffsetNotBoundary
	}
	cut := int(o - b)
	lim.bytes += cut // the size target counts from o, as for any read
	sp, err := e.messages(s, v, b, lim)
	if err != nil {
		return span{}, err
	}
	if end := b + uint64(len(msg)); len(sp.ends) == 1 && end < v.Tail {
		// The held bytes alone cannot be sent: take the next message too.
		more, err := e.messages(s, v, end, one)
		if err != nil {
			return span{}, err
		}
		sp.data = append(sp.data, more.data...)
		sp.ends = append(sp.ends, len(sp.data))
	}
	sp.data = sp.data[cut:]
	for i := range sp.ends {
		sp.ends[i] -= cut
	}
	return sp, nil
}

// containing returns the start and bytes of the message of v that holds offset o, from
// the tail cache when it covers o, else from storage; model.ErrOffsetNotBoundary when no
// message holds it.
func (e *Engine) containing(s *stream, v *streamMeta, o uint64) (uint64, []byte, error) {
	s.mu.Lock()
	c := &s.cache
	if len(c.msgs) > 0 && o >= c.start && o < c.end && c.end <= v.Tail {
		i := sort.Search(len(c.msgs), func(i int) bool { return c.msgs[i].off > o }) - 1
		m := c.msgs[i]
		s.mu.Unlock()
		return m.off, m.data(), nil
	}
	s.mu.Unlock()
	var (
		start uint64
		msg   []byte
	)
	err := e.db.View(func(tx *bolt.Tx) error {
		for _, sg := range v.segments() {
			if o < sg.From || o >= sg.To {
				continue
			}
			cur := tx.Bucket(bktData).Cursor()
			k, val := cur.Seek(posKey(sg.SID, o))
			if k == nil {
				k, val = cur.Last()
			} else {
				k, val = cur.Prev()
			}
			if k == nil {
				break
			}
			if sid, off := splitPosKey(k); sid == sg.SID && off >= sg.From && off+uint64(len(val)-1) > o {
				start, msg = off, append([]byte(nil), val[1:]...)
				return nil
			}
			break
		}
		return model.ErrOffsetNotBoundary
	})
	return start, msg, err
}
