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
)

// matrixMain regenerates the generated section of CONFORMANCE.md. Each --run is
// "NAME=DIR", DIR holding the report.json of one run; a missing report shows "not run".
func matrixMain(args []string) int {
	fs := flag.NewFlagSet("dsconform matrix", flag.ContinueOnError)
	out := fs.String("out", "CONFORMANCE.md", "file whose generated section is replaced (created if missing)")
	var runs []string
	fs.Func("run", "NAME=DIR of a run's report directory (repeatable, in column order)", func(s string) error {
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
		rep, err := conformance.LoadReport(filepath.Join(dir, conformance.ReportFile))
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
