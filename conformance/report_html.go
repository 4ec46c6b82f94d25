package conformance

import (
	_ "embed"
	"html/template"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/types"
)

// HTMLFile is the human-readable report written beside junit.xml and report.json.
const HTMLFile = "report.html"

//go:embed report_html.tmpl
var reportTemplate string

var reportTmpl = template.Must(template.New("report").Parse(reportTemplate))

// htmlReport is what report_html.tmpl renders.
type htmlReport struct {
	BaseURL, Surface, Filter string
	Start                    string
	Duration                 time.Duration
	Passed, Failed, Skipped  int
	Reqs                     []htmlReq
	Failures                 []htmlFailure
	Areas                    []string
}

// htmlReq is one row of the requirement matrix.
type htmlReq struct {
	ID, Area, Level, Text string
	Verdict               string     // pass, fail, skip or none (no spec)
	Result                string     // as in CONFORMANCE.md: pass, FAIL k/n, skip
	Specs                 []htmlSpec // failed first, then passed
	Skipped               []htmlSpec // shown folded
	Gap                   string     // why no spec checks it (Verdict none)
}

// htmlSpec is one spec checking a requirement.
type htmlSpec struct {
	Name, Verdict string
	Failure       int // index+1 into Failures when failed
}

// htmlFailure is a failing spec with its expectation and HTTP transcript.
type htmlFailure struct {
	N                    int
	Name, State, Where   string
	Reqs                 []string
	Area                 string
	Summary              string // the description before Gomega's "Expected"
	Actual, Matcher, Exp string // Gomega's "Expected <actual> <matcher> <expected>"
	Message              string // the whole message when it has no such shape
	Transcript           string
	Exchanges            int
}

// WriteHTMLReport writes report.html for r: the tally, the requirement matrix (id, level,
// text, verdict, specs) with filters by verdict and area, and each failure's expected and
// actual values and HTTP transcript (SSE bytes included). Plain HTML with a small inline
// script, no external resources.
func WriteHTMLReport(path string, r types.Report, cfg Config) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	err = reportTmpl.Execute(f, buildHTMLReport(r, cfg))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func buildHTMLReport(r types.Report, cfg Config) htmlReport {
	rep := htmlReport{BaseURL: cfg.BaseURL, Surface: string(cfg.Surface), Filter: r.SuiteConfig.LabelFilter,
		Start: r.StartTime.UTC().Format("2006-01-02 15:04:05 UTC"), Duration: r.RunTime.Round(time.Millisecond)}
	rep.Passed, rep.Failed, rep.Skipped = Tally(r)
	byReq := map[string][]types.SpecReport{}
	failureOf := map[string]int{}
	for _, s := range r.SpecReports {
		if s.State.Is(types.SpecStateFailureStates) {
			rep.Failures = append(rep.Failures, newHTMLFailure(len(rep.Failures)+1, s))
			failureOf[s.FullText()] = len(rep.Failures)
		}
		if s.LeafNodeType != types.NodeTypeIt {
			continue
		}
		for _, id := range requirementLabels(s.Labels()) {
			byReq[id] = append(byReq[id], s)
		}
	}
	for _, q := range Requirements() { // document order, so areas come in it too
		row := htmlReq{ID: q.ID, Area: areaOf(q.ID), Level: string(q.Level), Text: q.Text, Verdict: "none", Result: "no spec"}
		if !slices.Contains(rep.Areas, row.Area) {
			rep.Areas = append(rep.Areas, row.Area)
		}
		specs := byReq[q.ID]
		if len(specs) == 0 {
			row.Gap = GapReason(q.ID)
			if row.Gap == "" {
				row.Gap = "no spec yet"
			}
		} else {
			row.Result = resultOf(specs)
			row.Verdict = strings.Fields(strings.ToLower(row.Result))[0]
		}
		for _, s := range specs {
			hs := htmlSpec{Name: s.FullText(), Verdict: verdictOf(s.State), Failure: failureOf[s.FullText()]}
			if hs.Verdict == "skip" {
				row.Skipped = append(row.Skipped, hs)
			} else {
				row.Specs = append(row.Specs, hs)
			}
		}
		slices.SortStableFunc(row.Specs, func(a, b htmlSpec) int { return strings.Compare(a.Verdict, b.Verdict) }) // fail < pass
		rep.Reqs = append(rep.Reqs, row)
	}
	return rep
}

// resultOf summarises a requirement's specs like the CONFORMANCE.md matrix.
func resultOf(specs []types.SpecReport) string {
	m := map[string]types.SpecReport{}
	checks := make([]SpecInfo, len(specs))
	for i, s := range specs {
		m[s.FullText()] = s
		checks[i] = SpecInfo{FullText: s.FullText()}
	}
	return resultCell(&types.Report{}, m, checks)
}

func verdictOf(s types.SpecState) string {
	switch {
	case s == types.SpecStatePassed:
		return "pass"
	case s.Is(types.SpecStateFailureStates):
		return "fail"
	}
	return "skip"
}

// areaOf is a requirement's section: "B-5.2" for B-5.2-07.
func areaOf(id string) string {
	if i := strings.LastIndexByte(id, '-'); i > 0 {
		return id[:i]
	}
	return id
}

func newHTMLFailure(n int, s types.SpecReport) htmlFailure {
	f := htmlFailure{N: n, Name: s.FullText(), State: s.State.String(), Where: s.Failure.Location.String(),
		Reqs: requirementLabels(s.Labels())}
	if len(f.Reqs) > 0 {
		f.Area = areaOf(f.Reqs[0])
	}
	if f.Name == "" {
		f.Name = s.LeafNodeType.String() + " " + s.LeafNodeText
	}
	f.Summary, f.Actual, f.Matcher, f.Exp = splitGomega(s.Failure.Message)
	if f.Actual == "" {
		f.Message = strings.TrimRight(s.Failure.Message, "\n")
	}
	for _, e := range s.ReportEntries {
		if e.Name == transcriptEntry {
			f.Transcript += e.StringRepresentation()
			f.Exchanges += strings.Count("\n"+e.StringRepresentation(), "\n#")
		}
	}
	return f
}

// splitGomega splits a Gomega failure message "DESC\nExpected\n    ACTUAL\nMATCHER\n    EXPECTED"
// (the block may be indented, as in HaveHTTPHeaderWithValue's) into its parts; actual is
// empty when the message has another shape.
func splitGomega(msg string) (summary, actual, matcher, expected string) {
	lines := strings.Split(strings.TrimRight(msg, "\n"), "\n")
	at := slices.IndexFunc(lines, func(l string) bool { return strings.TrimSpace(l) == "Expected" })
	if at < 0 {
		return "", "", "", ""
	}
	ind := lines[at][:len(lines[at])-len(strings.TrimLeft(lines[at], " "))]
	inner := ind + "    "
	i := at + 1
	var act, exp []string
	for ; i < len(lines) && strings.HasPrefix(lines[i], inner); i++ {
		act = append(act, strings.TrimPrefix(lines[i], inner))
	}
	if i >= len(lines) || len(act) == 0 {
		return "", "", "", ""
	}
	matcher = strings.TrimSpace(lines[i])
	for i++; i < len(lines); i++ {
		exp = append(exp, strings.TrimPrefix(lines[i], inner))
	}
	return strings.TrimSpace(strings.Join(lines[:at], "\n")), strings.Join(act, "\n"), matcher, strings.Join(exp, "\n")
}
