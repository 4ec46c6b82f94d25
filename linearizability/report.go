package linearizability

import (
	"bytes"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"strings"
	"time"

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
// linearizations and the illegal point, on failure) headed by the summary and every
// violation, each stage's also marked on the timeline, and the summary as text. dir is
// created if needed.
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
	if err := writeVisualization(filepath.Join(dir, VisualizationFile), h, r); err != nil {
		return fmt.Errorf("visualization: %w", err)
	}
	summary := r.Summary() + "\n"
	if !r.OK() {
		summary += "violations:\n" + describeErrors(r.Errors)
	}
	return os.WriteFile(filepath.Join(dir, SummaryFile), []byte(summary), 0o644)
}

// writeVisualization writes porcupine's HTML for h with the violations of r: a block
// above the timeline lists all of them, and those of the stages after linearizability
// (offsets, finals, live, assumptions), which porcupine does not know, are annotations
// in a "violations" row. When the check stopped before porcupine ran (a broken
// recording assumption), porcupine runs here, for the picture only.
func writeVisualization(path string, h History, r Result) error {
	info := r.info
	if r.Linearizable == "" {
		_, info = porcupine.CheckOperationsVerbose(Model, h.porcupineOps(), 10*time.Second)
	}
	info.AddAnnotations(violationAnnotations(h, r.Errors))
	if err := porcupine.VisualizePath(Model, info, path); err != nil {
		return err
	}
	page, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	page = bytes.Replace(page, []byte("<body>"), []byte("<body>\n"+violationBlock(r)), 1)
	return os.WriteFile(path, page, 0o644)
}

// violationAnnotations marks each violation porcupine did not find itself on a
// "violations" row spanning the history.
func violationAnnotations(h History, errs []error) []porcupine.Annotation {
	var end int64
	for _, op := range h.Ops {
		end = max(end, op.Call, op.Return)
	}
	var out []porcupine.Annotation
	for _, err := range errs {
		stage, rest, _ := strings.Cut(err.Error(), ": ")
		if stage == "linearizability" {
			continue
		}
		desc := rest
		if i := strings.Index(desc, ": "); i > 0 && i < 80 {
			desc = desc[:i]
		}
		out = append(out, porcupine.Annotation{Tag: "violations", Start: 0, End: end,
			Description: stage + ": " + desc, Details: err.Error(), BackgroundColor: "#f8c4c4"})
	}
	return out
}

// violationBlock is the HTML block of the summary and every violation.
func violationBlock(r Result) string {
	var b strings.Builder
	b.WriteString(`<div id="dslincheck-summary" style="font-family:monospace;white-space:pre-wrap;margin:1em">`)
	b.WriteString("<b>" + html.EscapeString(r.Summary()) + "</b>\n")
	for _, err := range r.Errors {
		b.WriteString("<div style=\"color:#a00\">- " + html.EscapeString(err.Error()) + "</div>")
	}
	b.WriteString("</div>\n")
	return b.String()
}
