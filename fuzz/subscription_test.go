package fuzz

import (
	"errors"
	"strings"
	"testing"

	"github.com/dsd-project/dsd/model"
)

// FuzzSubscriptionConfig: any PUT body is either a normalized configuration (a type, a
// pattern or streams, a lease in bounds, paths that are flat names, a hash that survives
// re-encoding the streams in another order) or INVALID_REQUEST; never a panic. Every
// accepted pattern matches its own literal prefix expansion consistently.
func FuzzSubscriptionConfig(f *testing.F) {
	for _, s := range []string{
		`{"type":"webhook","pattern":"events/*","webhook":{"url":"https://x.example/h"}}`,
		`{"type":"pull-wake","wake_stream":"w","streams":["b","a","a"],"lease_ttl_ms":1000}`,
		`{"type":"pull-wake","wake_stream":"w","pattern":"**/x/%2A"}`, `{}`, `[]`, `{"type":1}`,
	} {
		f.Add(s, "events/a/b")
	}
	f.Fuzz(func(t *testing.T, body, path string) {
		c, err := model.ParseSubscription([]byte(body))
		if err != nil {
			if !errors.Is(err, model.ErrBadSubscription) {
				t.Fatalf("%q: error %v is not INVALID_REQUEST", body, err)
			}
			return
		}
		if c.Pattern == "" && len(c.Streams) == 0 || c.LeaseTTLMs < model.MinLeaseTTLMs || c.LeaseTTLMs > model.MaxLeaseTTLMs {
			t.Fatalf("%q: accepted %+v", body, c)
		}
		for i, p := range c.Streams {
			if model.CheckFlatName(p) != nil || i > 0 && c.Streams[i-1] >= p {
				t.Fatalf("%q: streams %q not normalized", body, c.Streams)
			}
		}
		if c.Pattern != "" && model.MatchGlob(c.Pattern, path) && !strings.HasPrefix(strings.Trim(path, "/"), model.GlobLiteralPrefix(c.Pattern)) {
			t.Fatalf("pattern %q matches %q outside its literal prefix %q", c.Pattern, path, model.GlobLiteralPrefix(c.Pattern))
		}
	})
}
