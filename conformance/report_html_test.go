package conformance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"
)

// A Gomega message splits into description, actual, matcher and expected; another shape
// is kept whole.
func TestSplitGomega(t *testing.T) {
	msg := "Stream-Up-To-Date on a read at the tail\nExpected\n    <string>: \nto equal\n    <string>: true\n"
	sum, act, m, exp := splitGomega(msg)
	if sum != "Stream-Up-To-Date on a read at the tail" || act != "<string>: " || m != "to equal" || exp != "<string>: true" {
		t.Fatalf("split: %q %q %q %q", sum, act, m, exp)
	}
	msg = "HTTP header \"Stream-Up-To-Date\":\n    Expected\n        <string>: \n    to match regular expression\n        <string>: ^(?i:true)$"
	sum, act, m, exp = splitGomega(msg)
	if sum != `HTTP header "Stream-Up-To-Date":` || act != "<string>: " || m != "to match regular expression" || exp != "<string>: ^(?i:true)$" {
		t.Fatalf("indented split: %q %q %q %q", sum, act, m, exp)
	}
	if _, act, _, _ := splitGomega("no SSE event within the wait"); act != "" {
		t.Fatalf("free text split: %q", act)
	}
}

// report.html carries the matrix row of every requirement with its verdict, and each
// failure with its expected and actual values and transcript, escaped.
func TestWriteHTMLReport(t *testing.T) {
	failed := types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: "[MUST] reports <up-to-date>",
		State: types.SpecStateFailed, LeafNodeLabels: []string{"B-5.6-05", "sec:5.6"},
		Failure: types.Failure{Message: "Expected\n    <string>: \nto equal\n    <string>: true"},
		ReportEntries: types.ReportEntries{{Name: transcriptEntry,
			Value: types.WrapEntryValue("#1 GET http://x/s?offset=-1\n  < 200 OK\n")}}}
	passed := types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: "[MUST] closes", State: types.SpecStatePassed,
		LeafNodeLabels: []string{"B-5.6-06"}}
	path := filepath.Join(t.TempDir(), HTMLFile)
	if err := WriteHTMLReport(path, types.Report{SpecReports: []types.SpecReport{failed, passed}}, Config{BaseURL: "http://x", Surface: SurfaceFlat}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, want := range []string{
		`<tr id="req-B-5.6-05" data-verdict="fail" data-area="B-5.6">`,
		`<tr id="req-B-5.6-06" data-verdict="pass" data-area="B-5.6">`,
		`data-verdict="none"`, // requirements without a spec in this run
		"FAIL 1/1", "[MUST] reports &lt;up-to-date&gt;", "Expected (to equal)", "&lt;string&gt;: true",
		"#1 GET http://x/s?offset=-1", `<option>B-5.6</option>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}
