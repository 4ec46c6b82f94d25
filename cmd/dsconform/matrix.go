package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dsd-project/dsd/conformance"
	"github.com/onsi/ginkgo/v2/types"
)

// matrixMain regenerates the generated section of CONFORMANCE.md. Each --run is
// "NAME=DIR", DIR holding the report.json of one run, or "NAME=FILE.json", a results
// file written by `dsconform results`; a missing report shows "not run".
func matrixMain(args []string) int {
	fs := flag.NewFlagSet("dsconform matrix", flag.ContinueOnError)
	out := fs.String("out", "CONFORMANCE.md", "file whose generated section is replaced (created if missing)")
	var runs []string
	fs.Func("run", "NAME=DIR of a run's report directory, or NAME=FILE.json of a results file (repeatable, in column order)", func(s string) error {
		if !strings.Contains(s, "=") {
			return fmt.Errorf("--run wants NAME=DIR, got %q", s)
		}
		runs = append(runs, s)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	var cols []conformance.MatrixColumn
	for _, r := range runs {
		name, dir, _ := strings.Cut(r, "=")
		col := conformance.MatrixColumn{Name: name}
		rep, err := loadRun(dir)
		if err != nil {
			fmt.Fprintf(os.Stderr, "dsconform matrix: %s: %v (shown as not run)\n", name, err)
		} else {
			col.Report = rep
		}
		cols = append(cols, col)
	}
	var b bytes.Buffer
	conformance.WriteMatrix(&b, conformance.Inventory(), cols)
	if err := conformance.UpdateGeneratedSection(*out, b.String()); err != nil {
		fmt.Fprintln(os.Stderr, "dsconform matrix:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "dsconform matrix: updated %s\n", *out)
	return 0
}

// loadRun reads a run's report: DIR/report.json, or a results file.
func loadRun(path string) (*types.Report, error) {
	if strings.HasSuffix(path, ".json") {
		return conformance.LoadResults(path)
	}
	return conformance.LoadReport(filepath.Join(path, conformance.ReportFile))
}

// resultsMain condenses a run's report into a results file small enough to commit, for
// a server whose column `make conformance-matrix` shows without running it.
func resultsMain(args []string) int {
	fs := flag.NewFlagSet("dsconform results", flag.ContinueOnError)
	in := fs.String("in", "", "report directory of the run (holding report.json)")
	out := fs.String("out", "", "results file to write")
	server := fs.String("server", "", "what was tested, e.g. \"upstream Caddy server, commit abc123\"")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *in == "" || *out == "" {
		return usageError(fs, errors.New("--in and --out are required"))
	}
	rep, err := conformance.LoadReport(filepath.Join(*in, conformance.ReportFile))
	if err == nil {
		err = conformance.WriteResults(*out, conformance.CompactReport(rep, *server))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "dsconform results:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "dsconform results: wrote %s\n", *out)
	return 0
}
