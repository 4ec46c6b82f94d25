package engine

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
