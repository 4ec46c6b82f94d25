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
	"ceiling-server": {"the bare net/http handler (read body, 204, one header): the ceiling dsd is measured against", runCeilingServer},
	"append":         {"closed-loop single-message POST appends (optionally idempotent producers, JSON)", runAppend},
	"batch":          {"append-batch (length-prefixed frames) against single POSTs in the same run", runBatch},
	"fanout":         {"one paced writer, many SSE subscribers: publish-to-receive latency, loss, duplicates", runFanout},
	"replay":         {"many clients reading whole pre-filled streams by catch-up or /bootstrap", runReplay},
	"idle-sse":       {"hold many idle SSE subscribers and report the server's RSS per subscriber", runIdleSSE},
	"stall-sse":      {"issue 20: stalled catch-up SSE readers; server RSS, socket queues, healthy readers' latency", runStallSSE},
	"stall-body":     {"issue 20: stalled half-sent request bodies; server RSS and the answers they get", runStallBody},
	"many":           {"issue 19: a million streams in one bucket: RSS per stream, spread appends, listing per cursor", runMany},
	"fill":           {"create many streams holding a total size as fast as possible (start-up tests)", runFill},
	"probe":          {"poll HEAD on a stream until it answers 200; report the time since a given instant", runProbe},
	"report":         {"aggregate RESULT lines into the generated section of BENCHMARKS.md", runReport},
}

func main() { os.Exit(run(os.Args[1:])) }

// run dispatches to a workload and returns the exit status (2 = usage).
func run(args []string) int {
	if len(args) < 1 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage()
		if len(args) < 1 {
			return 2
		}
		return 0
	}
	if os.Getenv("GOGC") == "" {
		// The generator shares the machine with the server: fewer GC cycles cut its CPU per
		// request by about a quarter (measured on append against the Node server), for a
		// few tens of MB more heap. $GOGC overrides.
		debug.SetGCPercent(400)
	}
	w, ok := workloads[args[0]]
	if !ok {
		fmt.Fprintf(os.Stderr, "dsbench: unknown workload %q\n\n", args[0])
		usage()
		return 2
	}
	if path := os.Getenv("DSBENCH_CPUPROFILE"); path != "" {
		stop, err := startCPUProfile(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "dsbench: %v\n", err)
			return 1
		}
		defer stop()
	}
	if err := w.run(args[1:]); errors.Is(err, flag.ErrHelp) {
		return 0
	} else if err != nil {
		fmt.Fprintf(os.Stderr, "dsbench %s: %v\n", args[0], err)
		return 1
	}
	return 0
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
		fmt.Fprintf(os.Stderr, "  %-14s %s\n", n, workloads[n].summary)
	}
	fmt.Fprint(os.Stderr, `
Each run ends with one line "RESULT workload=NAME key=value ..." (latencies in ms, rates per s).
Env: DSBENCH_CPUPROFILE=FILE writes a CPU profile of the generator itself (go tool pprof);
GOGC overrides the generator's GC percent (400).
`)
}
