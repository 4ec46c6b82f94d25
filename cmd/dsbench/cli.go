package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// stdout receives the human summaries and the RESULT line.
var stdout io.Writer = os.Stdout

// flagUsage returns a --help printer for one workload.
func flagUsage(fs *flag.FlagSet, name, summary string) func() {
	return func() {
		fmt.Fprintf(fs.Output(), "Usage: dsbench %s [flags]\n\n%s\n\nFlags:\n", name, summary)
		fs.PrintDefaults()
	}
}

// byteSize is a flag value holding a byte count written as 100, 64KiB, 1MiB, 1GiB, 10kB, 1GB.
type byteSize int64

func (b *byteSize) String() string { return strconv.FormatInt(int64(*b), 10) }

// Set parses a byte count with an optional binary (KiB, MiB, GiB) or decimal (kB, MB, GB) unit.
func (b *byteSize) Set(s string) error {
	n, err := parseByteSize(s)
	if err == nil {
		*b = byteSize(n)
	}
	return err
}

// parseByteSize parses "100", "64KiB", "1GiB", "10kB", "2MB" (case-insensitive units).
func parseByteSize(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"b", 1}}
	t := strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("size %q: want a non-negative integer with an optional unit (KiB, MiB, GiB, kB, MB, GB)", s)
	}
	return n * mult, nil
}
