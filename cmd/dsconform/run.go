package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/dsd-project/dsd/conformance"
)

// testingT stands in for *testing.T outside go test (ginkgo.GinkgoTestingT).
type testingT struct{ failed bool }

func (t *testingT) Fail() { t.failed = true }

// runMain runs the kit; see the package doc for flags and exit codes.
func runMain(args []string) int {
	fs := flag.NewFlagSet("dsconform", flag.ContinueOnError)
	var cfg conformance.Config
	conformance.RegisterFlags(fs, &cfg)
	fs.Usage = func() { runUsage(fs) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		return usageError(fs, fmt.Errorf("unexpected arguments %q", fs.Args()))
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = os.Getenv("DS_BASE_URL")
	}
	if cfg.BaseURL == "" {
		return usageError(fs, errors.New("--base-url (or DS_BASE_URL) is required"))
	}
	cfg.Out = os.Stdout
	t := &testingT{}
	ok := conformance.Run(t, cfg)
	if !ok || t.failed {
		return 1
	}
	return 0
}

// runUsage prints the subcommands, the run flags and the exit status (dsconform --help).
func runUsage(fs *flag.FlagSet) {
	w := fs.Output()
	fmt.Fprint(w, `Usage:
  dsconform --base-url URL [flags]                 run the kit against a server
  dsconform list [--out FILE]                      write the spec inventory
  dsconform matrix --out FILE --run NAME=DIR ...   regenerate CONFORMANCE.md's tables from reports
  dsconform results --in DIR --out FILE.json       condense a report into a results file to commit

Exit status: 0 when every selected spec passed; 1 when a spec failed or none was
selected; 2 on a usage error. The last line printed is "N passed, N failed, N skipped".
Long-polls: the kit assumes the server answers an idle long-poll within
--long-poll-timeout (default 500ms); against a server with a longer timeout (dsd's
default is 20s) pass that value, or --long-poll-timeout auto to measure it once.

Flags of a run (DS_BASE_URL stands in for --base-url):
`)
	fs.PrintDefaults()
}
