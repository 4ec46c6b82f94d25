package conformance

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/reporters"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"
)

// SuiteName is the Ginkgo suite description.
const SuiteName = "Durable Streams conformance"

// Report file names inside Config.ReportDir (and HTMLFile).
const (
	JUnitFile  = "junit.xml"
	ReportFile = "report.json"
)

var (
	lastReportMu sync.Mutex
	lastReport   *types.Report
)

// The reports are written from inside the suite, like Kubernetes' --report-dir.
var _ = ginkgo.ReportAfterSuite("conformance reports", func(r ginkgo.Report) {
	lastReportMu.Lock()
	lastReport = &r
	lastReportMu.Unlock()
	rt := current()
	if rt.cfg.ReportDir == "" {
		return
	}
	gomega.Expect(os.MkdirAll(rt.cfg.ReportDir, 0o755)).To(gomega.Succeed())
	gomega.Expect(reporters.GenerateJUnitReportWithConfig(r, filepath.Join(rt.cfg.ReportDir, JUnitFile), reporters.JunitReportConfig{
		OmitTimelinesForSpecState: types.SpecStatePassed | types.SpecStateSkipped | types.SpecStatePending,
	})).To(gomega.Succeed())
	gomega.Expect(reporters.GenerateJSONReport(r, filepath.Join(rt.cfg.ReportDir, ReportFile))).To(gomega.Succeed())
	gomega.Expect(WriteHTMLReport(filepath.Join(rt.cfg.ReportDir, HTMLFile), r, rt.cfg)).To(gomega.Succeed())
})

// Run runs the kit against cfg.BaseURL and reports whether every selected spec passed.
// t is any GinkgoTestingT (*testing.T, or a stand-in outside go test). Run prepares the
// surface (creating the kit's bucket on the bucketed surface), detects extensions unless
// cfg.Extensions is set, runs the specs selected by the mode, extension, profile and
// user label filters (failing when none is selected), writes reports to cfg.ReportDir,
// and, with cfg.Out set, prints the failing specs' transcripts and a last line
// "N passed, N failed, N skipped". Call it once per process.
func Run(t ginkgo.GinkgoTestingT, cfg Config) bool {
	out := cfg.Out
	if out == nil {
		out = io.Discard
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		t.Fail()
		return false
	}
	if cfg.ReportDir != "" { // never leave a previous run's reports to be mistaken for this one's
		_ = os.Remove(filepath.Join(cfg.ReportDir, JUnitFile))
		_ = os.Remove(filepath.Join(cfg.ReportDir, ReportFile))
		_ = os.Remove(filepath.Join(cfg.ReportDir, HTMLFile))
	}
	rt := newRuntime(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	err = rt.prepare(ctx)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		t.Fail()
		return false
	}
	if cfg.MeasureLongPoll {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		d, err := rt.measureLongPoll(ctx)
		cancel()
		if err != nil {
			fmt.Fprintln(os.Stderr, "conformance: measuring the server's long-poll timeout:", err)
			t.Fail()
			return false
		}
		rt.cfg.LongPollTimeout, cfg.LongPollTimeout = d, d
		fmt.Fprintf(os.Stdout, "conformance: the server's long-poll timeout is about %s (measured)\n", d)
	}
	setActive(rt)
	defer setActive(nil)

	fmt.Fprintf(os.Stdout, "conformance: %s surface=%s run=%s extensions=[%s] profiles=[%s]\nconformance: label filter: %s\n",
		cfg.BaseURL, cfg.Surface, rt.runID, strings.Join(rt.extensions, ","), strings.Join(cfg.Profiles, ","), rt.filter())

	gomega.RegisterFailHandler(ginkgo.Fail)
	gomega.SetDefaultEventuallyTimeout(cfg.SpecTimeout / 2)
	gomega.SetDefaultEventuallyPollingInterval(50 * time.Millisecond)
	suiteConfig, reporterConfig := ginkgo.GinkgoConfiguration()
	suiteConfig.LabelFilter = rt.filter()
	suiteConfig.FocusStrings = append(suiteConfig.FocusStrings, cfg.FocusStrings...)
	suiteConfig.FailOnEmpty = true
	suiteConfig.RandomizeAllSpecs = true
	if cfg.RandomSeed != 0 {
		suiteConfig.RandomSeed = cfg.RandomSeed
	}
	reporterConfig.Verbose = cfg.Verbose
	if fi, err := os.Stdout.Stat(); err == nil && fi.Mode()&os.ModeCharDevice == 0 {
		reporterConfig.NoColor = true
	}
	reporterConfig.SilenceSkips = true
	ok := ginkgo.RunSpecs(t, SuiteName, suiteConfig, reporterConfig)

	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	leftover := rt.finish(ctx)
	cancel()
	if leftover != "" {
		fmt.Fprintln(os.Stderr, "conformance:", leftover)
	}
	lastReportMu.Lock()
	r := lastReport
	lastReportMu.Unlock()
	if r != nil {
		WriteSummary(out, *r)
	}
	return ok
}

// filter is the run's full label filter.
func (rt *runtime) filter() string {
	c := rt.cfg
	c.Extensions = rt.extensions
	return c.labelFilter()
}

// Tally counts the specs of a report: passed, failed (failed, panicked, timed out,
// interrupted or aborted, including suite-level nodes) and skipped (skipped or pending,
// including specs excluded by the filters).
func Tally(r types.Report) (passed, failed, skipped int) {
	for _, s := range r.SpecReports {
		if s.LeafNodeType != types.NodeTypeIt {
			if s.State.Is(types.SpecStateFailureStates) {
				failed++
			}
			continue
		}
		switch {
		case s.State == types.SpecStatePassed:
			passed++
		case s.State.Is(types.SpecStateFailureStates):
			failed++
		default:
			skipped++
		}
	}
	return passed, failed, skipped
}

// WriteSummary prints each failing spec (name, requirement ids, failure, HTTP
// transcript), then the tally line "N passed, N failed, N skipped" last.
func WriteSummary(w io.Writer, r types.Report) {
	passed, failed, skipped := Tally(r)
	if failed > 0 {
		fmt.Fprintf(w, "\n==== %d failing spec(s) ====\n", failed)
	}
	for _, s := range r.SpecReports {
		if !s.State.Is(types.SpecStateFailureStates) {
			continue
		}
		fmt.Fprintf(w, "\n--- FAIL: %s\n", s.FullText())
		if ids := requirementLabels(s.Labels()); len(ids) > 0 {
			fmt.Fprintf(w, "    requirements: %s\n", strings.Join(ids, ", "))
		}
		fmt.Fprintf(w, "    %s at %s\n", s.State, s.Failure.Location)
		for _, line := range strings.Split(strings.TrimRight(s.Failure.Message, "\n"), "\n") {
			fmt.Fprintf(w, "    | %s\n", line)
		}
		for _, e := range s.ReportEntries {
			if e.Name == transcriptEntry {
				fmt.Fprintf(w, "    HTTP transcript:\n")
				for _, line := range strings.Split(strings.TrimRight(e.StringRepresentation(), "\n"), "\n") {
					fmt.Fprintf(w, "      %s\n", line)
				}
			}
		}
	}
	writeSkipReasons(w, r)
	fmt.Fprintf(w, "%d passed, %d failed, %d skipped\n", passed, failed, skipped)
}

// writeSkipReasons prints, for the specs that did not run, the labels that gate them
// (ext:, profile:, slow, smoke) with a count each: the label filter of the run excluded
// them, e.g. "skipped: 22 need ext:buckets (not enabled on the flat surface)".
func writeSkipReasons(w io.Writer, r types.Report) {
	counts := map[string]int{}
	for _, s := range r.SpecReports {
		if s.LeafNodeType != types.NodeTypeIt || s.State == types.SpecStatePassed || s.State.Is(types.SpecStateFailureStates) {
			continue
		}
		var gates []string
		for _, l := range s.Labels() {
			if strings.HasPrefix(l, "ext:") || strings.HasPrefix(l, "profile:") || l == "slow" || l == "smoke" {
				gates = append(gates, l)
			}
		}
		reason := "need " + strings.Join(gates, " + ") + " (excluded by the label filter)"
		if len(gates) == 0 {
			reason = "were not selected (focus or mode)"
		}
		counts[reason]++
	}
	reasons := slices.Sorted(maps.Keys(counts))
	for _, reason := range reasons {
		fmt.Fprintf(w, "skipped: %d %s\n", counts[reason], reason)
	}
}

// requirementLabels filters requirement ids out of labels, sorted.
func requirementLabels(labels []string) []string {
	var ids []string
	for _, l := range labels {
		if isRequirementID(l) {
			ids = append(ids, l)
		}
	}
	sortIDs(ids)
	return ids
}
