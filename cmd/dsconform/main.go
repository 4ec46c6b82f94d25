// Command dsconform runs the Durable Streams conformance kit against any server URL.
//
//	dsconform --base-url URL [--surface bucketed|flat] [--mode smoke|core|full]
//	          [--label-filter EXPR] [--extensions a,b|auto|none] [--profiles dsd]
//	          [--report-dir DIR] [--long-poll-timeout 500ms]
//	dsconform list [--out FILE]
//	dsconform matrix --out CONFORMANCE.md --run "NAME=DIR" ...
//	dsconform results --in DIR --out FILE.json [--server TEXT]
//
// Run mode writes junit.xml, report.json and report.html to --report-dir, prints the failing specs'
// HTTP transcripts, and ends with the line "N passed, N failed, N skipped". It exits 1
// when any selected spec fails or no spec is selected, 2 on usage errors.
//
// --help (or help) prints the subcommands, the flags and the exit status. list writes
// the spec inventory (conformance/testdata/specs.txt). matrix regenerates the generated
// section of CONFORMANCE.md from report directories of earlier runs (or results files:
// results condenses a report into one small enough to commit).
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	args := os.Args[1:]
	if len(args) > 0 {
		switch args[0] {
		case "list":
			os.Exit(listMain(args[1:]))
		case "matrix":
			os.Exit(matrixMain(args[1:]))
		case "results":
			os.Exit(resultsMain(args[1:]))
		case "help":
			os.Exit(runMain([]string{"--help"}))
		}
	}
	os.Exit(runMain(args))
}

// usageError prints err with the flag set's usage and returns exit status 2.
func usageError(fs *flag.FlagSet, err error) int {
	fmt.Fprintln(os.Stderr, "dsconform:", err)
	fs.Usage()
	return 2
}
