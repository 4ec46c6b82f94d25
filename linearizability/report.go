package linearizability

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/anishathalye/porcupine"
)

// Report file names written by WriteReport.
const (
	HistoryFile       = "history.jsonl"
	VisualizationFile = "history.html"
	SummaryFile       = "summary.txt"
)

// WriteReport writes a checked history to dir: the history as JSONL (re-checkable with
// dslincheck), porcupine's HTML visualization of the linearization (or of the partial
// linearizations and the illegal point, on failure), and a summary with every
// violation. dir is created if needed.
func WriteReport(dir string, h History, r Result) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, HistoryFile))
	if err != nil {
		return err
	}
	if err := h.WriteJSONL(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if r.Linearizable != "" {
		if err := porcupine.VisualizePath(Model, r.info, filepath.Join(dir, VisualizationFile)); err != nil {
			return fmt.Errorf("visualization: %w", err)
		}
	}
	summary := r.Summary() + "\n"
	if !r.OK() {
		summary += "violations:\n" + describeErrors(r.Errors)
	}
	return os.WriteFile(filepath.Join(dir, SummaryFile), []byte(summary), 0o644)
}
