package conformance

import (
	"path/filepath"
	"testing"

	"github.com/onsi/ginkgo/v2/types"
)

// A results file keeps what the matrix shows of a run: each spec's state and failure.
func TestResultsRoundTrip(t *testing.T) {
	rep := &types.Report{SpecReports: []types.SpecReport{
		{LeafNodeType: types.NodeTypeIt, ContainerHierarchyTexts: []string{"5.2 Append"}, LeafNodeText: "[MUST] a",
			State: types.SpecStatePassed},
		{LeafNodeType: types.NodeTypeIt, ContainerHierarchyTexts: []string{"5.2 Append"}, LeafNodeText: "[MUST] b",
			State: types.SpecStateFailed, Failure: types.Failure{Message: "Expected\n    <int>: 1\nto equal 2"}},
		{LeafNodeType: types.NodeTypeIt, LeafNodeText: "c", State: types.SpecStateSkipped},
		{LeafNodeType: types.NodeTypeBeforeSuite, State: types.SpecStatePassed},
	}}
	path := filepath.Join(t.TempDir(), "run.json")
	if err := WriteResults(path, CompactReport(rep, "a server")); err != nil {
		t.Fatal(err)
	}
	back, err := LoadResults(path)
	if err != nil {
		t.Fatal(err)
	}
	p, f, s := Tally(*back)
	if p != 1 || f != 1 || s != 1 {
		t.Errorf("tally %d/%d/%d, want 1/1/1", p, f, s)
	}
	got := states(back)["5.2 Append [MUST] b"]
	if got.State != types.SpecStateFailed || got.Failure.Message != "Expected <int>: 1 to equal 2" {
		t.Errorf("the failing spec came back as %v %q", got.State, got.Failure.Message)
	}
}
