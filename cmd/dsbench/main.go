// Command dsbench is a load generator for Durable Streams servers (dsd, the Node reference
// server, or any other implementation of the protocol).
//
// Usage:
//
//	dsbench WORKLOAD [flags]
//
// Every workload prints a human summary and, last, one machine-readable line
// `RESULT workload=NAME key=value ...` that tools/bench/ scripts and `dsbench report` parse.
// A workload the server does not support (404/405/501 on its endpoint) prints
// `unsupported: ...` and a RESULT line with unsupported=1, and exits 0.
// See `dsbench WORKLOAD --help` for each workload's flags.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"sort"
)

// workload is one subcommand: a name, a one-line summary and its entry point.
type workload struct {
	summary string
	run     func(args []string) error
}

// workloads lists every subcommand by name.
var workloads = map[string]workload{
	"append":   {"closed-loop single-message POST appends (optionally idempotent producers, JSON)", runAppend},
	"batch":    {"append-batch (length-prefixed frames) against single POSTs in the same run", runBatch},
	"fanout":   {"one paced writer, many SSE subscribers: publish-to-receive latency, loss, duplicates", runFanout},
	"replay":   {"many clients reading whole pre-filled streams by catch-up or /bootstrap", runReplay},
	"idle-sse": {"hold many idle SSE subscribers and report the server's RSS per subscriber", runIdleSSE},
	"fill":     {"create many streams holding a total size as fast as possible (start-up tests)", runFill},
	"probe":    {"poll HEAD on a stream until it answers 200; report the time since a given instant", runProbe},
	"report":   {"aggregate RESULT lines into the generated section of BENCHMARKS.md", runReport},
}

func main() {
	if len(os.Args) < 2 || os.Args[1] == "-h" || os.Args[1] == "--help" || os.Args[1] == "help" {
		usage()
		if len(os.Args) < 2 {
			os.Exit(2)
		}
		return
	}
	if os.Getenv("GOGC") == "" {
		// The generator shares the machine with the server: fewer GC cycles cut its CPU per
		// request by about a quarter (measured on append against the Node server), for a
		// few tens of MB more heap. $GOGC overrides.
		debug.SetGCPercent(400)
	}
	w, ok := workloads[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "dsbench: unknown workload %q\n\n", os.Args[1])
		usage()
		os.Exit(2)
	}
	if err := w.run(os.Args[2:]); errors.Is(err, flag.ErrHelp) {
		return
	} else if err != nil {
		fmt.Fprintf(os.Stderr, "dsbench %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprint(os.Stderr, `dsbench: load generator for Durable Streams servers.

Usage: dsbench WORKLOAD [flags]     (dsbench WORKLOAD --help for its flags)

Targets: --base URL (default $DS_BASE_URL). Streams live at {base}/v1/stream/{name} (flat
surface), or at {base}/{bucket}/{name} with --bucket (created with PUT {base}/{bucket}).

Workloads:
`)
	names := make([]string, 0, len(workloads))
	for n := range workloads {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(os.Stderr, "  %-9s %s\n", n, workloads[n].summary)
	}
	fmt.Fprint(os.Stderr, `
Each run ends with one line "RESULT workload=NAME key=value ..." (latencies in ms, rates per s).
`)
}
