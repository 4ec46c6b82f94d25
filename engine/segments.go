package engine

// segment is a range of a stream's visible offsets whose messages are stored under one
// incarnation's sid: a plain stream has one; a fork has its inherited segments (owned by
// its sources, B-4.2-01) followed by its own.
type segment struct {
	SID     uint64 `json:"sid"`
	From    uint64 `json:"from"`    // first offset
	To      uint64 `json:"to"`      // end offset (exclusive); the own segment ends at the tail
	RecFrom uint64 `json:"recfrom"` // ordinal of the first record (JSON streams)
}

// ownStart is the first offset of the stream's own segment: its fork anchor, or 0.
func (m *streamMeta) ownStart() uint64 {
	if m.Fork != nil {
		return m.Fork.Anchor
	}
	return 0
}

// ownRecStart is the ordinal of the first record of the own segment.
func (m *streamMeta) ownRecStart() uint64 {
	if m.Fork != nil {
		return m.Fork.InheritedRecords
	}
	return 0
}

// segments returns the stream's visible segments in offset order, empty ones omitted.
func (m *streamMeta) segments() []segment {
	var segs []segment
	if m.Fork != nil {
		segs = append(segs, m.Fork.Chain...)
	}
	if own := m.ownStart(); m.Tail > own {
		segs = append(segs, segment{SID: m.ID, From: own, To: m.Tail, RecFrom: m.ownRecStart()})
	}
	return segs
}

// inheritedUpTo returns the segments a fork anchored at anchor inherits from m: every
// visible segment of m cut at anchor.
func (m *streamMeta) inheritedUpTo(anchor uint64) []segment {
	var out []segment
	for _, sg := range m.segments() {
		if sg.From >= anchor {
			break
		}
		if sg.To > anchor {
			sg.To = anchor
		}
		out = append(out, sg)
	}
	return out
}
