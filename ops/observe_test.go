package ops

import "testing"

// A hijacked connection's copy of the request's log fields gives them back unchanged,
// empty ones included.
func TestPackedFields(t *testing.T) {
	for _, f := range []requestFields{
		{method: "GET", path: "/v1/stream/a", query: "offset=now&live=sse", remote: "127.0.0.1:4242", proto: "HTTP/1.1"},
		{method: "GET", path: "/", proto: "HTTP/1.0"},
		{},
	} {
		p := packFields(f)
		if got := p.fields(); got != f {
			t.Errorf("packFields(%+v).fields() = %+v", f, got)
		}
	}
}
