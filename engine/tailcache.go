package engine

import (
	"sort"

	"github.com/dsd-project/dsd/engine/storage"
)

// cachedMsg is one message: its offset and its stored form, the flags byte followed by
// the message's canonical bytes. The buffer is shared and never modified.
type cachedMsg = storage.Message

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
	if msgs[0].Off != c.end {
		c.reset(msgs[0].Off)
	}
	for _, m := range msgs {
		c.msgs = append(c.msgs, m)
		c.bytes += len(m.Val)
		c.end = m.Off + m.Size()
	}
	drop := 0
	for c.bytes > c.max && drop < len(c.msgs)-1 {
		c.bytes -= len(c.msgs[drop].Val)
		drop++
	}
	if drop > 0 {
		// Reslice from the front instead of moving the kept messages down: a full cache
		// drops about one message per append, and moving thousands of entries each time
		// was a memmove of the whole cache per append. append reallocates (copying only
		// the kept ones) once the capacity behind them is used up: amortized O(1).
		clear(c.msgs[:drop]) // release the dropped buffers now
		c.msgs = c.msgs[drop:]
	}
	c.start = c.msgs[0].Off
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
	i := sort.Search(len(c.msgs), func(i int) bool { return c.msgs[i].Off >= from })
	if i == len(c.msgs) || c.msgs[i].Off != from {
		return nil, true, false
	}
	j := i
	for j < len(c.msgs) && c.msgs[j].Off < limit {
		j++
	}
	return c.msgs[i:j], true, true
}
