package fuzz

import (
	"errors"
	"regexp"
	"testing"

	"github.com/dsd-project/dsd/model"
)

var tokenGrammar = regexp.MustCompile(`^[0-9]{16}_[0-9]{16}$`)

// FuzzOffsetRoundTrip: a token parses exactly when it matches ^[0-9]{16}_[0-9]{16}$; a
// segment-0 token formats back to itself; formatting then parsing a position is the
// identity; and token order is position order (D2, A-35, B-8-01, B-8-11).
func FuzzOffsetRoundTrip(f *testing.F) {
	f.Add("0000000000000000_0000000000000000", uint64(0), uint64(1))
	f.Add("9999999999999999_9999999999999999", uint64(9), uint64(10))
	f.Add("0000000000000000_0000000000001396", uint64(1396), uint64(99))
	f.Add("0000000000000001_0000000000000000", uint64(9999999999999999), uint64(9999999999999998))
	f.Add("0000000000000000-0000000000000000", uint64(100), uint64(100))
	f.Add("-1", uint64(0), uint64(0))
	f.Fuzz(func(t *testing.T, s string, a, b uint64) {
		o, err := model.ParseOffset(s)
		if ok := tokenGrammar.MatchString(s); ok != (err == nil) {
			t.Fatalf("ParseOffset(%q): err %v, grammar match %t", s, err, ok)
		}
		if err != nil && !errors.Is(err, model.ErrBadOffset) {
			t.Fatalf("ParseOffset(%q): error %v is not ErrBadOffset", s, err)
		}
		if err == nil && s[:16] == "0000000000000000" {
			if o.String() != s || string(o.AppendToken(nil)) != s {
				t.Fatalf("ParseOffset(%q) = %d, which formats as %q / %q", s, o, o.String(), o.AppendToken(nil))
			}
		}
		a, b = a%(uint64(model.MaxOffset)+1), b%(uint64(model.MaxOffset)+1)
		oa, ob := model.Offset(a), model.Offset(b)
		for _, o := range []model.Offset{oa, ob} {
			back, err := model.ParseOffset(o.String())
			if err != nil || back != o || string(o.AppendToken(nil)) != o.String() {
				t.Fatalf("position %d: token %q parses to %d (%v)", o, o.String(), back, err)
			}
		}
		if (a < b) != (oa.String() < ob.String()) {
			t.Fatalf("positions %d < %d is %t, tokens %q < %q is not", a, b, a < b, oa, ob)
		}
	})
}

// FuzzOffsetSpecParse: "-1" and "now" are specs, never offsets; every other accepted
// spec is a token; errors are ErrBadOffset; a parsed spec renders as what was sent
// (B-8-03, B-8-08, B-5.6-08).
func FuzzOffsetSpecParse(f *testing.F) {
	for _, s := range []string{"-1", "now", "NOW", "", " -1", "0000000000000000_0000000000000007",
		"0000000000000000_000000000000000", "now\x00", "-01"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		spec, err := model.ParseOffsetSpec(s)
		if err != nil {
			if !errors.Is(err, model.ErrBadOffset) {
				t.Fatalf("ParseOffsetSpec(%q): %v is not ErrBadOffset", s, err)
			}
			if s == "-1" || s == "now" || tokenGrammar.MatchString(s) {
				t.Fatalf("ParseOffsetSpec(%q) refused a valid spec: %v", s, err)
			}
			return
		}
		switch spec.Kind {
		case model.SpecStart:
			if s != "-1" {
				t.Fatalf("%q parsed as the start", s)
			}
		case model.SpecNow:
			if s != "now" {
				t.Fatalf("%q parsed as now", s)
			}
		case model.SpecAt:
			if _, err := model.ParseOffset(s); err != nil || s == "-1" || s == "now" {
				t.Fatalf("%q parsed as an offset (%v)", s, err)
			}
		}
		canonical := spec.Kind != model.SpecAt || s[:16] == "0000000000000000"
		if canonical && spec.String() != s {
			t.Fatalf("spec %q renders as %q", s, spec.String())
		}
	})
}
