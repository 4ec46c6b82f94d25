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

// listMain writes the spec inventory to --out (stdout by default).
func listMain(args []string) int {
	fs := flag.NewFlagSet("dsconform list", flag.ContinueOnError)
	out := fs.String("out", "", "write the inventory to this file instead of stdout")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	var b bytes.Buffer
	if err := conformance.WriteInventory(&b, conformance.Inventory()); err != nil {
		fmt.Fprintln(os.Stderr, "dsconform list:", err)
		return 1
	}
	if *out == "" {
		os.Stdout.Write(b.Bytes())
		return 0
	}
	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "dsconform list:", err)
		return 1
	}
	if err := os.WriteFile(*out, b.Bytes(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "dsconform list:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "dsconform list: wrote %s (%d specs)\n", *out, strings.Count(b.String(), "\n")-2)
	return 0
}
