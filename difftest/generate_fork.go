package difftest

import (
	"net/url"

	"github.com/dsd-project/dsd/model"
)

// forkNames are the bucket-local names forks are mostly created at.
var forkNames = []string{"f0", "f1", "f2"}

// junkSources are Stream-Forked-From values that name no stream of the bucket.
var junkSources = []string{"bkt0/s0", "//bkt0/s0", "/bkt0/s0?x=1", "/bkt1/s0", "/bkt0", "/bkt0/s0/snapshot",
	"/BAD/s0", "/bkt0/", "/bkt0/a%2Fb", "/bkt0/%zz", "/bkt0/streams", "/bkt0/__ds"}

// fork turns a create into a fork request (B-4.2): mostly of a live stream of the
// bucket, at no offset (its tail), at one of its message boundaries or at the start,
// sometimes with a sub-offset, its own Content-Type, a malformed header, or the exact
// request of an earlier fork again (idempotent, B-4.2-07).
func (g *generator) fork(c model.CreateStream) model.CreateStream {
	if len(g.forks) > 0 && g.chance(15) {
		again := oneOf(g, g.forks)
		if again.ExpiresAt != nil {
			// The clock may have passed it since: keep Expires-At values in the future
			// for the wall clock too (see Generate).
			again.ExpiresAt = model.Str(g.expiresAt())
		}
		if g.chance(25) {
			again.ForkSubOffset = model.Str(oneOf(g, []string{"0", "1", "2"}))
		}
		return again
	}
	if g.chance(75) {
		c.Stream.Stream = oneOf(g, forkNames)
	}
	src := g.key()
	var bound []model.StreamKey // soft-deleted ones included (B-4.2-06: 409)
	for _, k := range g.s.Streams() {
		if k.Bucket == c.Stream.Bucket && k != c.Stream {
			bound = append(bound, k)
		}
	}
	if len(bound) > 0 && g.chance(85) {
		src = oneOf(g, bound)
	}
	src.Bucket = c.Stream.Bucket
	v, exists := g.s.Stream(src, g.now)
	c.ForkedFrom = model.Str("/" + url.PathEscape(src.Bucket) + "/" + url.PathEscape(src.Stream))
	if g.chance(6) {
		c.ForkedFrom = model.Str(oneOf(g, junkSources))
	}
	switch {
	case !g.chance(60):
		c.ContentType = nil
	case exists && g.chance(60):
		c.ContentType = model.Str(v.ContentType)
	}
	switch r := g.pick(100); {
	case r < 45:
	case r < 88 && exists:
		o := v.Boundaries[g.pick(len(v.Boundaries))]
		if g.chance(20) {
			o = v.Tail
		}
		switch g.pick(10) {
		case 0:
			o++ // inside a message: 400
		case 1, 2:
			o = g.below(v, v.Retained) // below retention: 410
		}
		c.ForkOffset = model.Str(o.String())
		if g.chance(10) {
			c.ForkOffset = model.Str(" " + o.String() + " ")
		}
	case r < 94:
		c.ForkOffset = model.Str(model.ZeroOffset.String())
	default:
		c.ForkOffset = model.Str(oneOf(g, []string{"-1", "now", "abc", "0000000000000000_0000000000009999"}))
	}
	if g.chance(30) && (c.ForkOffset != nil || g.chance(15)) {
		c.ForkSubOffset = model.Str(oneOf(g, []string{"0", "1", "2", "3", "5", "1", "2", "40"}))
		if g.chance(15) {
			c.ForkSubOffset = model.Str(oneOf(g, []string{"05", "-1", "abc", "", "1.5"}))
		}
	}
	if g.chance(5) {
		c.ForkedFrom = nil // fork headers without Stream-Forked-From (B-4.2-13)
	}
	g.forks = append(g.forks, c)
	return c
}
