package conformance

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Requirement is one numbered requirement of the base protocol digest (B-…) or of the
// extension spec (X-…).
type Requirement struct {
	// ID is B-<§>-<nn> or X-<§>-<nn>.
	ID string
	// Level is the strongest keyword of the requirement (descriptive protocol rules and
	// upstream-suite pins without a keyword count as MUST).
	Level Level
	// Text is a one-line paraphrase.
	Text string
}

// Requirements returns every requirement, base first, each in document order.
func Requirements() []Requirement {
	out := make([]Requirement, 0, len(baseRequirements)+len(extRequirements))
	out = append(out, baseRequirements...)
	return append(out, extRequirements...)
}

// LookupRequirement returns the requirement with the given id.
func LookupRequirement(id string) (Requirement, bool) {
	r, ok := requirementIndex()[id]
	return r, ok
}

var (
	reqIndexOnce sync.Once
	reqIndex     map[string]Requirement
)

// requirementIndex maps ids to requirements; it panics on a duplicate id or bad level,
// which are programming errors in the tables.
func requirementIndex() map[string]Requirement {
	reqIndexOnce.Do(func() {
		reqIndex = map[string]Requirement{}
		for _, r := range Requirements() {
			if _, dup := reqIndex[r.ID]; dup {
				panic("conformance: duplicate requirement id " + r.ID)
			}
			if r.Level.rank() == 0 {
				panic("conformance: requirement " + r.ID + " has no level")
			}
			reqIndex[r.ID] = r
		}
	})
	return reqIndex
}

// CompareRequirementIDs orders ids by kind (B before X), then section numerically, then
// number: B-5.2-07 < B-5.2.1-01 < B-5.10-01.
func CompareRequirementIDs(a, b string) int {
	ka, kb := idKey(a), idKey(b)
	for i := 0; i < len(ka) && i < len(kb); i++ {
		if ka[i] != kb[i] {
			if ka[i] < kb[i] {
				return -1
			}
			return 1
		}
	}
	return len(ka) - len(kb)
}

// idKey turns "B-5.2-07" into [0, 5, 2, -1, 7] (-1 separates the section from the number).
func idKey(id string) []int {
	kind, rest, _ := strings.Cut(id, "-")
	sec, num, _ := strings.Cut(rest, "-")
	key := []int{0}
	if kind == "X" {
		key[0] = 1
	}
	for _, p := range strings.Split(sec, ".") {
		n, _ := strconv.Atoi(p)
		key = append(key, n)
	}
	n, _ := strconv.Atoi(num)
	return append(key, -1, n)
}

// sortIDs sorts requirement ids in document-like order.
func sortIDs(ids []string) {
	sort.Slice(ids, func(i, j int) bool { return CompareRequirementIDs(ids[i], ids[j]) < 0 })
}

// checkLevel reports an error when a spec claims a level above its requirements' levels:
// a [MUST] spec must check at least one MUST requirement.
func checkLevel(level Level, ids []string) error {
	best := 0
	for _, id := range ids {
		r, ok := LookupRequirement(id)
		if !ok {
			return fmt.Errorf("unknown requirement id %q", id)
		}
		if r.Level.rank() > best {
			best = r.Level.rank()
		}
	}
	if level.rank() > best {
		return fmt.Errorf("spec level %s is above every requirement it checks (%s)", level, strings.Join(ids, ", "))
	}
	return nil
}
