package linearizability

import (
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The HTML report shows every violation the summary lists, of every stage, not only
// porcupine's (issue 18 item 13).
func TestReportShowsEveryKindOfViolation(t *testing.T) {
	for _, name := range []string{"refusal-offset-bad", "live-gap-bad", "read-after-append-bad"} {
		t.Run(name, func(t *testing.T) {
			h := handWritten()[name]
			res := Check(h, CheckOptions{Timeout: time.Minute})
			if res.OK() {
				t.Fatal("the fixture passed")
			}
			dir := t.TempDir()
			if err := WriteReport(dir, h, res); err != nil {
				t.Fatal(err)
			}
			page, err := os.ReadFile(filepath.Join(dir, VisualizationFile))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range res.Errors {
				if !strings.Contains(string(page), html.EscapeString(e.Error())) {
					t.Errorf("the HTML report does not show %q", e)
				}
			}
		})
	}
}

// A history that breaks a recording assumption still gets its HTML, with the reason.
func TestReportOfAnUncheckableHistory(t *testing.T) {
	h := handWritten()["read-after-append-ok"]
	h.Ops[1].Call = h.Ops[0].Call // client 0's create and append now overlap
	res := Check(h, CheckOptions{Timeout: time.Minute})
	if res.OK() || res.Linearizable != "" {
		t.Fatalf("want an assumption failure, got %s", res.Summary())
	}
	dir := t.TempDir()
	if err := WriteReport(dir, h, res); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, VisualizationFile))
	if err != nil || !strings.Contains(string(page), "recording assumption") {
		t.Fatalf("no HTML naming the assumption (%v)", err)
	}
}
