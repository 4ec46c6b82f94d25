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
