package conformance

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

var idShape = regexp.MustCompile(`^[BX]-[0-9]+(\.[0-9]+)*-[0-9]{2}$`)

func TestRequirementRegistry(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Requirements() {
		if !idShape.MatchString(r.ID) {
			t.Errorf("%s: malformed id", r.ID)
		}
		if seen[r.ID] {
			t.Errorf("%s: duplicate", r.ID)
		}
		seen[r.ID] = true
		if r.Level.rank() == 0 {
			t.Errorf("%s: level %q", r.ID, r.Level)
		}
		if strings.TrimSpace(r.Text) == "" || strings.Contains(r.Text, "\n") {
			t.Errorf("%s: text must be one non-empty line", r.ID)
		}
	}
	for id := range gapReasons {
		if !seen[id] {
			t.Errorf("gap reason for unknown requirement %s", id)
		}
	}
}

// TestExtensionNumbering pins that extension ids are consecutive within each section, so
// that a renumbering (which would break CONFORMANCE.md history) shows up in review.
func TestExtensionNumbering(t *testing.T) {
	next := map[string]int{}
	for _, r := range extRequirements {
		sec := r.ID[2:strings.LastIndex(r.ID, "-")]
		next[sec]++
		if want := next[sec]; r.ID != "X-"+sec+"-"+fmt.Sprintf("%02d", want) {
			t.Errorf("%s: expected X-%s-%s (ids are numbered in document order)", r.ID, sec, fmt.Sprintf("%02d", want))
		}
	}
}

func TestValidateLabel(t *testing.T) {
	for _, ok := range []string{"req:must", "sec:5.2", "ext:buckets", "profile:dsd", "smoke", "slow", "B-5.2-07", "X-1.2-03"} {
		if err := validateLabel(ok); err != nil {
			t.Errorf("validateLabel(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"req:maybe", "sec:99", "ext:teleport", "profile:other", "fast", "B-99-01", "X-1.2-99", "owner:me"} {
		if err := validateLabel(bad); err == nil {
			t.Errorf("validateLabel(%q) accepted an unknown label", bad)
		}
	}
}

func TestValidateSpec(t *testing.T) {
	if err := validateSpec(MUST, Reqs{"B-5.2-07"}, "text", nil); err != nil {
		t.Fatal(err)
	}
	bad := []struct {
		level Level
		reqs  Reqs
		text  string
	}{
		{MUST, nil, "no ids"},
		{MUST, Reqs{"B-5.2-07", "B-5.2-07"}, "duplicate id"},
		{MUST, Reqs{"B-404-01"}, "unknown id"},
		{MUST, Reqs{"B-5.2-04"}, "MUST spec of a SHOULD requirement"},
		{"OPTIONAL", Reqs{"B-5.2-07"}, "unknown level"},
		{MUST, Reqs{"B-5.2-07"}, " padded "},
	}
	for _, b := range bad {
		if err := validateSpec(b.level, b.reqs, b.text, nil); err == nil {
			t.Errorf("validateSpec(%s, %v, %q) accepted", b.level, b.reqs, b.text)
		}
	}
	if err := validateSpec(MUST, Reqs{"B-5.2-07"}, "text", []any{Label("ext:nope")}); err == nil {
		t.Error("validateSpec accepted an unknown ext label")
	}
	if err := validateSpec(MUST, Reqs{"B-5.2-07"}, "text", []any{Label("B-5.2-08")}); err == nil {
		t.Error("validateSpec accepted a hand-written requirement label")
	}
}

func TestLabelFilter(t *testing.T) {
	cases := []struct {
		cfg  Config
		want string
	}{
		{Config{Mode: ModeCore}, "(req:must && ext: isEmpty) && ext: isEmpty && profile: isEmpty"},
		{Config{Mode: ModeFull, Extensions: []string{"fork", "buckets"}, Profiles: []string{"dsd"}},
			"ext: isSubsetOf {buckets,fork} && profile: isSubsetOf {dsd}"},
		{Config{Mode: ModeSmoke, LabelFilter: "B-5.2-07"}, "(smoke) && ext: isEmpty && profile: isEmpty && (B-5.2-07)"},
	}
	for _, c := range cases {
		if got := c.cfg.labelFilter(); got != c.want {
			t.Errorf("labelFilter(%+v) = %q, want %q", c.cfg, got, c.want)
		}
	}
}

func TestCompareRequirementIDs(t *testing.T) {
	ordered := []string{"B-3-01", "B-5.2-07", "B-5.2-10", "B-5.2.1-01", "B-5.10-01", "B-10-01", "X-0-01", "X-1.1-01", "X-6.10-01"}
	for i := 1; i < len(ordered); i++ {
		if CompareRequirementIDs(ordered[i-1], ordered[i]) >= 0 {
			t.Errorf("%s should sort before %s", ordered[i-1], ordered[i])
		}
	}
}
