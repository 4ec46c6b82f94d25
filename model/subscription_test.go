package model

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// Globs: "*" one segment, "**" zero or more, literals otherwise, %2A a literal '*'.
// Spec: B-6-05 (base protocol §6.2).
func TestMatchGlob(t *testing.T) {
	cases := []struct {
		pat, path string
		want      bool
	}{
		{"events/*", "events/a", true}, {"events/*", "events/a/b", false}, {"events/*", "events", false},
		{"events/**", "events", true}, {"events/**", "events/a/b", true}, {"**", "x", true},
		{"**/leaf", "leaf", true}, {"**/leaf", "a/b/leaf", true}, {"a/**/z", "a/z", true},
		{"a/**/z", "a/b/c/z", true}, {"a/**/z", "a/b/c", false}, {"/events/*/", "events/a", true},
		{"a/%2A", "a/*", true}, {"a/%2a", "a/b", false}, {"a/b", "a/b", true}, {"a/b", "a/c", false},
		{"*/*", "a/b", true}, {"*", "", false},
	}
	for _, c := range cases {
		if got := MatchGlob(c.pat, c.path); got != c.want {
			t.Errorf("MatchGlob(%q, %q) = %v, want %v", c.pat, c.path, got, c.want)
		}
	}
	for _, bad := range []string{"", "a//b", "foo*", "a/b**", "*x/y", strings.Repeat("a/", MaxGlobBytes/2) + "a"} {
		if err := CheckGlob(bad); !errors.Is(err, ErrBadSubscription) {
			t.Errorf("CheckGlob(%q) = %v", bad, err)
		}
	}
	if p := GlobLiteralPrefix("events/x/*/y"); p != "events/x/" {
		t.Errorf("literal prefix %q", p)
	}
	if p := GlobLiteralPrefix("a/b"); p != "a/b" {
		t.Errorf("literal prefix %q", p)
	}
}

// The config hash ignores stream order and duplicates and applies the default lease;
// description and every delivery field count. Spec: B-6-03 (base protocol §6.2).
func TestSubscriptionConfigHash(t *testing.T) {
	parse := func(s string) SubscriptionConfig {
		t.Helper()
		c, err := ParseSubscription([]byte(s))
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		return c
	}
	a := parse(`{"type":"pull-wake","wake_stream":"/wake/p/","streams":["b","a","b"],"pattern":"e/*"}`)
	b := parse(`{"type":"pull-wake","wake_stream":"wake/p","streams":["a","b"],"pattern":"/e/*","lease_ttl_ms":30000,"extra":1}`)
	if a.Hash() != b.Hash() || a.WakeStream != "wake/p" || len(a.Streams) != 2 {
		t.Fatalf("equal configs hash differently: %+v %+v", a, b)
	}
	for _, other := range []string{
		`{"type":"pull-wake","wake_stream":"wake/p","streams":["a","b"],"pattern":"e/*","lease_ttl_ms":1000}`,
		`{"type":"pull-wake","wake_stream":"wake/q","streams":["a","b"],"pattern":"e/*"}`,
		`{"type":"pull-wake","wake_stream":"wake/p","streams":["a","b"],"pattern":"e/*","description":""}`,
		`{"type":"pull-wake","wake_stream":"wake/p","streams":["a"],"pattern":"e/*"}`,
	} {
		if parse(other).Hash() == a.Hash() {
			t.Errorf("%s hashes like %+v", other, a)
		}
	}
}

// Malformed configurations are INVALID_REQUEST (base protocol §6.2).
func TestParseSubscriptionRejects(t *testing.T) {
	for _, body := range []string{
		`[]`, `{`, `{"pattern":"a/*"}`, `{"type":"x","pattern":"a"}`,
		`{"type":"webhook","pattern":"a"}`, `{"type":"webhook","pattern":"a","webhook":{}}`,
		`{"type":"pull-wake","pattern":"a"}`, `{"type":"pull-wake","wake_stream":"w"}`,
		`{"type":"pull-wake","wake_stream":"w","streams":["w"]}`,
		`{"type":"pull-wake","wake_stream":"w","pattern":"a","lease_ttl_ms":999}`,
		`{"type":"pull-wake","wake_stream":"w","pattern":"a","lease_ttl_ms":600001}`,
		`{"type":"pull-wake","wake_stream":"w","pattern":"a","lease_ttl_ms":1500.5}`,
		`{"type":"pull-wake","wake_stream":"w","streams":["a//b"]}`,
		`{"type":"pull-wake","wake_stream":"w","pattern":"a*"}`,
		`{"type":"pull-wake","wake_stream":"../x","pattern":"a"}`,
		`{"type":"pull-wake","wake_stream":"w","pattern":"a"} trailing`,
		`{"type":"pull-wake","wake_stream":"w","pattern":"a"}{"type":"webhook"}`,
	} {
		if _, err := ParseSubscription([]byte(body)); !errors.Is(err, ErrBadSubscription) {
			t.Errorf("%s: %v, want INVALID_REQUEST", body, err)
		}
	}
	for _, id := range []string{"", "a/b", "a b", string(make([]byte, 129)), ".", ".."} {
		if CheckSubscriptionID(id) == nil {
			t.Errorf("id %q accepted", id)
		}
	}
}

// Backoff: 1 s doubling to 60 s, within ±20 %. Spec: B-7-04 (base protocol §7.1).
func TestBackoffBounds(t *testing.T) {
	want := []time.Duration{1, 2, 4, 8, 16, 32, 60, 60, 60}
	for i, w := range want {
		w *= time.Second
		lo, hi := Backoff(i+1, 0), Backoff(i+1, 0.999999)
		if lo != w*8/10 || hi > w*12/10 || hi < w*119/100 {
			t.Errorf("attempt %d: [%v, %v], want [%v, %v)", i+1, lo, hi, w*8/10, w*12/10)
		}
	}
	if Backoff(0, 0.5) != time.Second || Backoff(1000, 0.5) != time.Minute {
		t.Errorf("clamping: %v %v", Backoff(0, 0.5), Backoff(1000, 0.5))
	}
}

// Patterns of many "**" against deep paths match in work linear in pattern and path size:
// the backtracking matcher took exponential time here (a subscription could stall every
// append). The compiled matcher agrees with a plain recursive oracle on small inputs.
// Spec: B-6-05 (base protocol §6.2).
func TestMatchGlobManyWildcards(t *testing.T) {
	deep := strings.Repeat("a/", 500) + "a"
	pat := strings.Repeat("**/a/", 40) + "b"
	if MatchGlob(pat, deep) {
		t.Fatalf("pattern ending in b matched a path without b")
	}
	if !MatchGlob(strings.Repeat("**/a/", 40)+"**", deep) {
		t.Fatalf("40 x (**/a) did not match 501 a's")
	}
	if !MatchGlob(strings.Repeat("**/", 1000)+"a", "a") {
		t.Fatalf("repeated ** did not match zero segments")
	}
	segs := []string{"*", "**", "a", "b"}
	paths := []string{"", "a", "b", "a/b", "a/a/b", "b/a/b/a", "a/b/b/a/b"}
	for i := 0; i < 4*4*4*4*4; i++ {
		var p []string
		for n, k := i, 0; k < 1+i%4; k, n = k+1, n/4 {
			p = append(p, segs[n%4])
		}
		pattern := strings.Join(p, "/")
		for _, path := range paths {
			if got, want := MatchGlob(pattern, path), oracleMatch(CompileGlob(pattern), SplitPath(path)); got != want {
				t.Errorf("MatchGlob(%q, %q) = %v, oracle %v", pattern, path, got, want)
			}
		}
	}
}

// oracleMatch is the straightforward recursive glob matcher (exponential in the worst
// case; fine for the small inputs above).
func oracleMatch(g Glob, segs []string) bool {
	if len(g) == 0 {
		return len(segs) == 0
	}
	switch g[0] {
	case globMany:
		for i := 0; i <= len(segs); i++ {
			if oracleMatch(g[1:], segs[i:]) {
				return true
			}
		}
		return false
	case globOne:
		return len(segs) > 0 && oracleMatch(g[1:], segs[1:])
	}
	return len(segs) > 0 && g[0] == segs[0] && oracleMatch(g[1:], segs[1:])
}
