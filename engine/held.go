package engine

import (
	"sort"

	"github.com/dsd-project/dsd/engine/storage"
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
	lim.Bytes += cut // the size target counts from o, as for any read
	sp, err := e.messages(s, v, b, lim)
	if err != nil {
		return span{}, err
	}
	if end := b + uint64(len(msg)); len(sp.ends) == 1 && end < v.Tail {
		// The held bytes alone cannot be sent: take the next message too.
		more, err := e.messages(s, v, end, storage.One)
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
		i := sort.Search(len(c.msgs), func(i int) bool { return c.msgs[i].Off > o }) - 1
		m := c.msgs[i]
		s.mu.Unlock()
		return m.Off, m.Data(), nil
	}
	s.mu.Unlock()
	start, val, err := e.st.MessageAt(v.segments(), o)
	if err != nil {
		return 0, nil, err
	}
	return start, val[1:], nil
}
