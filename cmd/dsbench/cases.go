package main

import (
	"fmt"
	"strings"
)

// benchCase is one row of the peers table: a `case=` tag that tools/bench/peers-case.sh puts
// on its RESULT lines, and the metric compared across servers. Issue 19's targets are judged
// in the targets table (targets.go), whose rows name the cases they read.
type benchCase struct {
	Name   string // case= tag
	Title  string // what ran
	Metric string // RESULT key compared across servers
	Unit   string // unit of Metric
	Lower  bool   // lower is better (latency, memory)
	// Target and Check judge dsd on this case alone, for a target row that reads the case's
	// own judgement (target 6: caseTargets("many-1m", ...)): Target states it as the issue
	// does, Check gets every server's aggregate and returns ok=false with the measured figure
	// and the target when it is missed.
	Target string
	Check  func(a map[string]*serverAgg) checkResult
}

// Server kinds as tools/with-server.sh names them.
const (
	kindDSD         = "dsd"
	kindNodeDurable = "node-durable"
	kindNode        = "node"
	kindNoSync      = "dsd-nosync" // dsd --unsafe-no-sync: its CPU cost without fsync
	kindCeiling     = "ceiling"    // dsbench ceiling-server: the bare net/http handler
)

// benchCases lists the rows in table order.
var benchCases = []benchCase{
	{Name: "append-100", Title: "Durable appends: 100 streams, 50 connections, 100 B (dsbench)", Metric: "rps", Unit: "req/s"},
	{Name: "wrk-append-100", Title: "The same, driven by wrk (tools/bench/wrk-append.sh)", Metric: "rps", Unit: "req/s"},
	{Name: "append-1", Title: "Durable appends: 1 stream, 50 connections, 100 B (dsbench)", Metric: "rps", Unit: "req/s"},
	{Name: "wrk-append-1", Title: "The same, driven by wrk", Metric: "rps", Unit: "req/s"},
	{Name: "batch-100", Title: "append-batch: 100 frames of 100 B per request, 100 streams, 50 connections", Metric: "records_per_s", Unit: "records/s"},
	{Name: "fanout-500", Title: "SSE fan-out: 500 subscribers, 1 writer at 50 events/s (dsd only)", Metric: "p99_ms", Unit: "ms publish-to-receive", Lower: true},
	{Name: "fanout-1000", Title: "SSE fan-out: 1,000 subscribers, 1 writer at 50 events/s", Metric: "p99_ms", Unit: "ms publish-to-receive", Lower: true},
	{Name: "replay-500", Title: "Catch-up replay: 500 clients each reading a 200 KiB stream at once (keep-alive connections opened before the timer)", Metric: "mb_per_s", Unit: "MB/s in all"},
	{Name: "replay-bootstrap-500", Title: "Bootstrap replay: the same streams read with GET {stream}/bootstrap", Metric: "p99_ms", Unit: "ms per client", Lower: true},
	{Name: "idle-sse-10000", Title: "Idle SSE subscribers (IDLE_SUBS, 10,000 by default): server RSS growth per subscriber", Metric: "per_sub_kib", Unit: "KiB", Lower: true},
	{Name: "startup", Title: "Start-up: time to first successful HEAD after a restart with 10,000 streams / 1 GiB", Metric: "ready_ms", Unit: "ms", Lower: true},
	{Name: "many-1m", Title: "Many streams (MANY_STREAMS, 1,000,000 by default) in one bucket, each appended to once: server RSS per stream (dsbench many)", Metric: "per_stream_b", Unit: "B", Lower: true,
		Target: manyTarget, Check: manyCheck},
	{Name: "many-1m-startup", Title: "The same: time to first successful HEAD after a restart", Metric: "ready_ms", Unit: "ms", Lower: true,
		Target: "serves within 1 s (issue 19)",
		Check:  func(a map[string]*serverAgg) checkResult { return maxOf(a[kindDSD], "ready_ms", 1000) }},
}

// manyTarget is issue 19's target 6 but start-up (its own row). "Costs the same at any
// cursor" is read as: the median page latencies at the first, middle and last cursor
// within 1.5x of each other.
const manyTarget = "1,000,000 streams: <= 1 KiB RSS per stream; appends over 100,000 streams >= 80 % of those over 100; " +
	"a listing page as fast at the last cursor as at the first (p50 max/min <= 1.5)"

func manyCheck(a map[string]*serverAgg) checkResult {
	d := a[kindDSD]
	return all(minOf(d, "streams", 1000000), maxOf(d, "per_stream_b", 1024), minOf(d, "spread_streams", 100000),
		minOf(d, "spread_ratio", 0.8), maxOf(d, "list_ratio", 1.5))
}

// caseByName returns the case with that name.
func caseByName(name string) (benchCase, bool) {
	for _, c := range benchCases {
		if c.Name == name {
			return c, true
		}
	}
	return benchCase{}, false
}

// all combines checks: ok when every one is, with the reasons of those that are not.
func all(checks ...checkResult) checkResult {
	var why []string
	for _, c := range checks {
		if !c.ok {
			why = append(why, c.why)
		}
	}
	return checkResult{len(why) == 0, strings.Join(why, "; ")}
}

// checkResult is one condition's outcome; why explains a failure.
type checkResult struct {
	ok  bool
	why string
}

// maxOf and minOf check dsd's median of key against a limit, for a case's Check.
func maxOf(s *serverAgg, key string, limit float64) checkResult {
	v, ok := s.median(key)
	if !ok {
		return checkResult{false, "no dsd result for " + key}
	}
	return checkResult{v <= limit, fmt.Sprintf("%s %.3g > %g", key, v, limit)}
}

func minOf(s *serverAgg, key string, limit float64) checkResult {
	v, ok := s.median(key)
	if !ok {
		return checkResult{false, "no dsd result for " + key}
	}
	return checkResult{v >= limit, fmt.Sprintf("%s %.3g < %g", key, v, limit)}
}

// ratio is dsd's median of key over Node durable's.
func ratio(a map[string]*serverAgg, key string) (float64, bool) {
	d, ok1 := a[kindDSD].median(key)
	n, ok2 := a[kindNodeDurable].median(key)
	if !ok1 || !ok2 || n == 0 {
		return 0, false
	}
	return d / n, true
}
