package engine

import "sort"

// cachedMsg is one message: its offset and its stored form, the flags byte followed by
// the message's canonical bytes. The buffer is shared and never modified.
type cachedMsg struct {
	off uint64
	buf []byte
}

func (m cachedMsg) data() []byte { return m.buf[1:] }
func (m cachedMsg) flags() byte  { return m.buf[0] }
func (m cachedMsg) size() uint64 { return uint64(len(m.buf) - 1) }

// tailCache keeps the most recent committed messages of a stream, contiguous up to the
// committed tail, so that live readers woken after a commit are served from memory.
// It covers [start, end): start is the offset of msgs[0] (or end when empty).
type tailCache struct {
	msgs  []cachedMsg
	start uint64
	end   uint64
	bytes int
	max   int
}

// reset empties the cache; it then covers nothing below tail.
func (c *tailCache) reset(tail uint64) {
	c.msgs, c.bytes, c.start, c.end = nil, 0, tail, tail
}

// add appends committed messages. Messages must follow the cached range; a gap (data
// committed while the cache was not following) resets it.
func (c *tailCache) add(msgs []cachedMsg) {
	if len(msgs) == 0 {
		return
	}
	if msgs[0].off != c.end {
		c.reset(msgs[0].off)
	}
	for _, m := range msgs {
		c.msgs = append(c.msgs, m)
		c.bytes += len(m.buf)
		c.end = m.off + m.size()
	}
	drop := 0
	for c.bytes > c.max && drop < len(c.msgs)-1 {
		c.bytes -= len(c.msgs[drop].buf)
		drop++
	}
	if drop > 0 {
		n := copy(c.msgs, c.msgs[drop:])
		clear(c.msgs[n:])
		c.msgs = c.msgs[:n]
	}
	c.start = c.msgs[0].off
}

// slice returns the cached messages from offset from up to (not including) limit, and
// ok = false when from is not covered. found is false when from is covered but is not a
// message boundary.
func (c *tailCache) slice(from, limit uint64) (msgs []cachedMsg, ok, found bool) {
	if len(c.msgs) == 0 || from < c.start || from > c.end {
		return nil, false, false
	}
	if from == c.end {
		return nil, true, true
	}
	i := sort.Search(len(c.msgs), func(i int) bool { return c.msgs[i].off >= from })
	if i == len(c.msgs) || c.msgs[i].off != from {
		return nil, true, false
	}
	j := i
	for j < len(c.msgs) && c.msgs[j].off < limit {
		j++
	}
	return c.msgs[i:j], true, true
}
