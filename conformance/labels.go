package conformance

import (
	"fmt"
	"strings"
)

// The label vocabulary is closed (Kubernetes' frozen ValidFeatures): ConformanceIt and
// Section reject any label not listed here, and the run stops while the spec tree is built.

// knownExtensions are the ext:<id> values. fork and subscriptions are base-protocol features
// (§4.2, §6-§7) labelled as extensions so that servers without them can skip them.
var knownExtensions = []string{
	"buckets",
	"snapshot",
	"bootstrap",
	"append-batch",
	"attrs",
	"json-record-coordinates-v1",
	"fork",
	"subscriptions",
}

// knownProfiles are the profile:<id> values: checks of one server's documented choices
// where the protocol leaves room (dsd: docs/DESIGN.md D2 offsets, D7 error bodies, A-nn).
var knownProfiles = []string{"dsd"}

// knownSections are the sec:<id> values, one per spec file: base-protocol section numbers,
// x<n> for extension section n, and "smoke".
var knownSections = []string{
	"smoke", "3", "4", "4.1", "4.2", "5.1", "5.2", "5.2.1", "5.3", "5.4", "5.5", "5.6", "5.7",
	"5.8", "5.x", "6", "6.1", "8", "9", "10", "12",
	"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8",
}

// plainLabels are the labels without a key.
var plainLabels = []string{
	"smoke", // the one smoke spec (mode smoke)
	"slow",  // waits for seconds (TTL expiry)
}

// Level is a requirement keyword level (RFC 2119).
type Level string

const (
	MUST   Level = "MUST"
	SHOULD Level = "SHOULD"
	MAY    Level = "MAY"
)

// label is the req:<level> label of l.
func (l Level) label() string { return "req:" + strings.ToLower(string(l)) }

// rank orders levels: MUST > SHOULD > MAY.
func (l Level) rank() int {
	switch l {
	case MUST:
		return 3
	case SHOULD:
		return 2
	case MAY:
		return 1
	}
	return 0
}

// validateLabel reports whether l belongs to the vocabulary.
func validateLabel(l string) error {
	if key, value, ok := strings.Cut(l, ":"); ok {
		var allowed []string
		switch key {
		case "req":
			allowed = []string{"must", "should", "may"}
		case "sec":
			allowed = knownSections
		case "ext":
			allowed = knownExtensions
		case "profile":
			allowed = knownProfiles
		default:
			return fmt.Errorf("unknown label key %q in %q", key, l)
		}
		if !contains(allowed, value) {
			return fmt.Errorf("unknown %s label value %q (allowed: %s)", key, value, strings.Join(allowed, ", "))
		}
		return nil
	}
	if isRequirementID(l) {
		if _, ok := requirementIndex()[l]; !ok {
			return fmt.Errorf("unknown requirement id %q", l)
		}
		return nil
	}
	if !contains(plainLabels, l) {
		return fmt.Errorf("unknown label %q", l)
	}
	return nil
}

// isRequirementID reports whether l has the shape of a requirement id (B-… or X-…).
func isRequirementID(l string) bool {
	return strings.HasPrefix(l, "B-") || strings.HasPrefix(l, "X-")
}
