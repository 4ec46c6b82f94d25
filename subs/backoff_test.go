package subs

import (
	"testing"
	"time"

	"github.com/dsd-project/dsd/model"
)

func TestBackoffBounds(t *testing.T) {
	base := []time.Duration{1, 2, 4, 8, 16, 32, 60, 60, 60}
	for i, b := range base {
		n := i + 1
		lo, hi := Backoff(n, 0), Backoff(n, 0.999999)
		want := b * time.Second
		if lo != want*8/10 || hi < want*119/100 || hi > want*12/10 {
			t.Errorf("attempt %d: [%v, %v], want [%v, %v)", n, lo, hi, want*8/10, want*12/10)
		}
		if mid := Backoff(n, 0.5); mid != want {
			t.Errorf("attempt %d: no-jitter delay %v, want %v", n, mid, want)
		}
	}
	if Backoff(1000, 0.5) != time.Minute || Backoff(0, 0.5) != time.Second {
		t.Error("out-of-range attempts are not clamped")
	}
}

func TestMatchGlob(t *testing.T) {
	cases := []struct {
		pat, path string
		ok        bool
	}{
		{"events/*", "events/a", true},
		{"events/*", "events/a/b", false},
		{"events/*", "events", false},
		{"events/**", "events", true},
		{"events/**", "events/a/b", true},
		{"**", "x/y", true},
		{"**/log", "a/b/log", true},
		{"**/log", "log", true},
		{"a/**/z", "a/z", true},
		{"a/**/z", "a/b/c/z", true},
		{"a/**/z", "a/b/c/y", false},
		{"/events/*/", "events/a", true},
		{"events/%2A", "events/*", true},
		{"events/%2a", "events/a", false},
		{"events/foo*", "events/foobar", false},
	}
	for _, c := range cases {
		if got := model.MatchGlob(c.pat, c.path); got != c.ok {
			t.Errorf("model.MatchGlob(%q, %q) = %v", c.pat, c.path, got)
		}
	}
}
