package linearizability

import "testing"

// A retention whose outcome is unknown (a 503: its node was killed) and that no later
// operation observed may never have taken effect: a final read of the whole stream is
// then a legal end, as is one from the boundary; content neither explains is reported.
// (The cluster's fault run once reported the first as a violation.)
func TestFinalsAcceptTrailingUnknownWritesNotApplied(t *testing.T) {
	hist := func(final string) History {
		b := (&hist{}).op(0, 0, 1, create("s"), Output{Status: 201, Offset: tok(0)}).
			op(0, 2, 3, appendIn("s", "abc"), Output{Status: 204, Offset: tok(3)}).
			op(0, 4, 5, Input{Kind: OpSnapshot, Stream: "s", Offset: tok(3), Body: "S"},
				Output{Status: 204, SnapOffset: tok(3), SnapDigest: blobDigest("S")}).
			op(0, 6, 7, appendIn("s", "de"), Output{Status: 204, Offset: tok(5)}).
			op(0, 8, 0, Input{Kind: OpRetain, Stream: "s", Offset: tok(3)}, Output{})
		b.h.Finals = []Final{{Stream: "s", Content: []byte(final), Offset: tok(5)}}
		return b.h
	}
	for _, c := range []struct {
		final string
		ok    bool
	}{{"abcde", true}, {"de", true}, {"abXde", false}} {
		r := Check(hist(c.final), CheckOptions{})
		if r.OK() != c.ok {
			t.Errorf("final %q: OK %t, want %t; errors: %v", c.final, r.OK(), c.ok, r.Errors)
		}
	}
}
