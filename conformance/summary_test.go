package conformance

import (
	"bytes"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"
)

// Every skipped spec is accounted for by the labels that kept it out of the run.
func TestSummaryPrintsSkipReasons(t *testing.T) {
	it := func(state types.SpecState, labels ...string) types.SpecReport {
		return types.SpecReport{LeafNodeType: types.NodeTypeIt, State: state, LeafNodeLabels: labels}
	}
	r := types.Report{SpecReports: []types.SpecReport{
		it(types.SpecStatePassed, "ext:fork"),
		it(types.SpecStateSkipped, "ext:buckets", "req:must"),
		it(types.SpecStateSkipped, "ext:buckets"),
		it(types.SpecStateSkipped, "profile:dsd", "sec:5.1"),
		it(types.SpecStatePending),
	}}
	var b bytes.Buffer
	WriteSummary(&b, r)
	out := b.String()
	for _, want := range []string{
		"skipped: 2 need ext:buckets (excluded by the label filter)",
		"skipped: 1 need profile:dsd (excluded by the label filter)",
		"skipped: 1 were not selected (focus or mode)",
		"1 passed, 0 failed, 4 skipped",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}
