package difftest

import (
	"github.com/dsd-project/dsd/model"
)

// junkOffsets are offset path segments that are not offsets (D2, extension §8).
var junkOffsets = []string{"-1", "now", "abc", "0", "0000000000000001_0000000000000000", "9999999999999999_9999999999999999"}

// boundaryNear names a boundary of stream v: mostly a real message boundary (the
// visible snapshot's, the retention boundary, the tail, any), sometimes one byte off,
// past the tail, or not an offset at all.
func (g *generator) boundaryNear(v model.StreamView, exists bool) string {
	if !exists || g.chance(5) {
		return oneOf(g, junkOffsets)
	}
	o := v.Boundaries[g.pick(len(v.Boundaries))]
	switch g.pick(12) {
	case 10, 11:
		o = g.below(v, v.Retained)
	case 0:
		if v.SnapshotOffset != nil {
			o = *v.SnapshotOffset
		}
	case 1:
		o = v.Retained
	case 2:
		o = v.Tail
	case 3:
		o++
	case 4:
		o = v.Tail + 1
	}
	return o.String()
}

// publishSnapshot is a snapshot publish (extension §2.2): mostly at a real boundary,
// sometimes repeating the visible snapshot exactly (idempotent) or with other content
// (409), with or without a Stream-Snapshot-Match.
func (g *generator) publishSnapshot() model.PublishSnapshot {
	c := model.PublishSnapshot{Stream: g.key()}
	v, exists := g.s.Stream(c.Stream, g.now)
	c.Offset = model.Str(g.boundaryNear(v, exists))
	if exists && g.chance(40) {
		c.Offset = model.Str(v.Tail.String())
	}
	if g.chance(4) {
		c.Offset = nil
	}
	if g.chance(12) {
		c.Offset, c.Record = nil, model.Str(g.ordinal(v, exists))
	}
	switch r := g.pick(100); {
	case r < 40:
	case r < 70:
		c.ContentType = model.Str(oneOf(g, []string{"application/octet-stream", "text/plain", "Text/Plain; charset=x", "application/json"}))
	case r < 75:
		c.ContentType = model.Str(oneOf(g, badTypes))
	}
	c.Body = g.body(deref(c.ContentType))
	if exists && v.SnapshotOffset != nil && g.chance(20) {
		c.Offset = model.Str(v.SnapshotOffset.String())
		c.ContentType, c.Body = model.Str(v.SnapshotContentType), v.SnapshotBody
		if g.chance(30) {
			c.Body = append(append([]byte{}, c.Body...), 'x')
		}
	}
	if g.chance(20) {
		c.Match = model.Str(oneOf(g, []string{v.SnapshotDigest, v.SnapshotDigest, "sha256:00", ""}))
	}
	return c
}

func (g *generator) getSnapshot() model.GetSnapshot {
	c := model.GetSnapshot{Stream: g.key()}
	if g.chance(40) {
		return c
	}
	v, exists := g.s.Stream(c.Stream, g.now)
	c.Offset = model.Str(g.boundaryNear(v, exists))
	if exists && v.SnapshotOffset != nil && g.chance(60) {
		c.Offset = model.Str(v.SnapshotOffset.String())
	}
	return c
}

func (g *generator) deleteSnapshot() model.DeleteSnapshot {
	c := model.DeleteSnapshot{Stream: g.key()}
	v, exists := g.s.Stream(c.Stream, g.now)
	c.Offset = g.boundaryNear(v, exists)
	if exists && v.SnapshotOffset != nil && g.chance(70) {
		c.Offset = v.SnapshotOffset.String()
	}
	return c
}

// setRetention moves the retention boundary (extension §2.2): mostly to the visible
// snapshot or a boundary before it, sometimes back, past the snapshot or the tail.
func (g *generator) setRetention() model.SetRetention {
	c := model.SetRetention{Stream: g.key()}
	v, exists := g.s.Stream(c.Stream, g.now)
	c.Offset = model.Str(g.boundaryNear(v, exists))
	if exists && v.SnapshotOffset != nil && g.chance(70) {
		var before []model.Offset
		for _, b := range v.Boundaries {
			if b > v.Retained && b <= *v.SnapshotOffset {
				before = append(before, b)
			}
		}
		if len(before) > 0 {
			c.Offset = model.Str(oneOf(g, before).String())
		}
		if g.chance(40) {
			c.Offset = model.Str(v.SnapshotOffset.String())
		}
	}
	if g.chance(3) {
		c.Offset = nil
	}
	if g.chance(12) {
		c.Offset, c.Record = nil, model.Str(g.ordinal(v, exists))
	}
	return c
}

func (g *generator) bootstrap() model.Bootstrap {
	c := model.Bootstrap{Stream: g.key()}
	if g.chance(5) {
		c.Live = model.Str(oneOf(g, []string{"sse", "long-poll", ""}))
	}
	return c
}

// below picks a message boundary before o when there is one (an offset the retention
// boundary has made 410), else o.
func (g *generator) below(v model.StreamView, o model.Offset) model.Offset {
	var out []model.Offset
	for _, b := range v.Boundaries {
		if b < o {
			out = append(out, b)
		}
	}
	if len(out) == 0 {
		return o
	}
	return oneOf(g, out)
}
