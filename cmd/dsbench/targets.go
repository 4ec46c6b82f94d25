package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The targets table of `dsbench report`: issue 19's targets, each judged on the medians over
// this run's rounds. Rows read the peers cases (cases.go) and two kinds of figures that are
// not servers: Go benchmarks run in the same run (tools/bench/gobench.sh: the write(2) floor,
// record reads, tagged server=dsd case=NAME/SUB) and, for target 7, the figures BENCHMARKS.md
// carried before the work (tools/bench/baseline.txt, given with --baseline).

// targetRow is one row: the target number ("-" for a reference figure), the target
// as the issue states it, the workload it is judged on, the cases it reads (the peers table
// names its targets from them) and the judgement.
type targetRow struct {
	Num      string
	Goal     string
	Workload string
	Cases    []string
	Judge    func(j *judge) verdict
}

// Case names the target rows read besides the peers cases.
const (
	floorCase        = "write-floor/conns=1000" // httpd BenchmarkLoopbackWriteFloor, 1,000 sockets
	recordReadPrefix = "record-reads/"          // engine BenchmarkRecordRead's sub-benchmarks
)

// regressionTolerance is how much worse than its baseline a figure may be and still count as
// no regression (target 7): run-to-run noise of a quiet machine.
const regressionTolerance = 0.10

// Case lists of the rows.
var (
	append100 = []string{"append-100", "wrk-append-100"}
	append1   = []string{"append-1", "wrk-append-1"}
	fanout    = []string{"fanout-1000"}
)

// targetRows lists the table in order. Target 6 (1,000,000 streams) is judged by the Checks
// of the many-1m cases (branch many), once they exist.
var targetRows = []targetRow{
	{"-", "the ceiling: `dsbench ceiling-server` (read the body, answer 204 with one header)", "append-100", append100,
		onGenerators("append-100", ceilingFigure)},
	{"-", "the ceiling", "append-1", append1, onGenerators("append-1", ceilingFigure)},
	{"1", ">= 50 % of the ceiling", "durable appends, 100 streams, 50 connections, 100 B", append100,
		onGenerators("append-100", shareOfCeiling(kindDSD, 50))},
	{"1", ">= 12x the Node reference durable", "the same", append100, onGenerators("append-100", timesNodeDurable(12))},
	{"1", "p99 <= 10 ms", "the same", append100, onGenerators("append-100", p99AtMost(10))},
	{"1", ">= 40 % of the ceiling", "durable appends, 1 stream", append1, onGenerators("append-1", shareOfCeiling(kindDSD, 40))},
	{"2", "`--unsafe-no-sync` >= 70 % of the ceiling", "appends, 100 streams", append100,
		onGenerators("append-100", shareOfCeiling(kindNoSync, 70))},
	{"2", "`--unsafe-no-sync` >= 70 % of the ceiling", "appends, 1 stream", append1,
		onGenerators("append-1", shareOfCeiling(kindNoSync, 70))},
	{"3", "0 lost (every subscriber connected, writer at 50 events/s)", "SSE fan-out, 1,000 subscribers, 100 B", fanout,
		withShape("fanout-1000", subs1000, fanoutComplete("fanout-1000"))},
	{"3", "server CPU per delivery <= 1.5x the write(2) floor", "the same", fanout,
		withShape("fanout-1000", subs1000, deliveryVsFloor("fanout-1000", 1.5))},
	{"3", "p99 <= 10 ms at 500 subscribers", "SSE fan-out, 500 subscribers", []string{"fanout-500"},
		withShape("fanout-500", []KV{{"subscribers", "500"}}, fanoutP99("fanout-500", 10))},
	{"3", "p99 at 1,000 <= 1/5 of the Node reference's", "SSE fan-out, 1,000 subscribers", fanout,
		withShape("fanout-1000", subs1000, versusNode("fanout-1000", metric{"p99_ms", "ms p99", 1, true, "", ""}, 0.2))},
	{"4", "<= 1 KiB of dsd RSS per subscriber", "10,000 idle SSE subscribers", []string{"idle-sse-10000"},
		withShape("idle-sse-10000", []KV{{"subscribers", "10000"}}, idleRSS("idle-sse-10000", 1))},
	{"5", "aggregate MB/s >= 3x the Node reference's", "catch-up replay, 500 clients x 200 KiB", []string{"replay-500"},
		withShape("replay-500", []KV{{"clients", "500"}, {"stream_bytes", "204800"}},
			versusNode("replay-500", metric{"mb_per_s", "MB/s", 1, false, "server_cpu_us_per_mb", "us/MB"}, 3))},
	{"6", "1,000,000 streams: start-up within 1 s, <= 1 KiB RSS per stream, appends over 100,000 streams >= 80 % of the 100-stream figure, listing cost flat",
		"many streams (cases many-1m, many-1m-startup)", manyCases, caseTargets(manyCases...)},
	{"7", "append-batch records/s: no regression", "batch-100", []string{"batch-100"},
		noRegression("batch-100", metric{"records_per_s", "records/s", 1, false, "server_cpu_us_per_record", "us/record"})},
	{"7", "bootstrap: no regression", "replay-bootstrap-500 (p99 per client)", []string{"replay-bootstrap-500"},
		noRegression("replay-bootstrap-500", metric{"p99_ms", "ms", 1, true, "server_cpu_us_per_mb", "us/MB"})},
	{"7", "start-up: no regression", "startup (10,000 streams, 1 GiB)", []string{"startup"},
		noRegression("startup", metric{"ready_ms", "ms", 1, true, "", ""})},
	{"7", "record reads: no regression", "engine BenchmarkRecordRead, 1,000,000 records", nil, recordReads},
}

// manyCases are target 6's cases: the million streams, and the restart with them.
var manyCases = []string{"many-1m", "many-1m-startup"}

// targetsOf lists the numbers of the targets judged on case c ("-" when none), for the
// peers table.
func targetsOf(c string) string {
	var nums []string
	for _, r := range targetRows {
		if r.Num != "-" && slices.Contains(r.Cases, c) && !slices.Contains(nums, r.Num) {
			nums = append(nums, r.Num)
		}
	}
	if len(nums) == 0 {
		return "-"
	}
	return strings.Join(nums, ", ")
}

// metric is the figure a row compares: its RESULT key, how it is shown (value x scale, in
// unit), its direction, and the server CPU key shown beside it ("" = none).
type metric struct {
	key, unit       string
	scale           float64
	lower           bool
	cpuKey, cpuUnit string
}

// subs1000 is the shape of target 3's fan-out at 1,000 subscribers.
var subs1000 = []KV{{"subscribers", "1000"}}

// onGenerators judges a condition on the dsbench case and on its wrk twin ("wrk-" + c).
func onGenerators(c string, one func(j *judge, c string) verdict) func(*judge) verdict {
	return func(j *judge) verdict {
		return combine([]string{"dsbench", "wrk"}, []verdict{one(j, c), one(j, "wrk-"+c)})
	}
}

// withCPU renders a median with the server CPU per operation beside it.
func withCPU(a *serverAgg, v float64, unit, cpuKey, cpuUnit string) string {
	s := fmtNum(v) + " " + unit
	if cpuKey == "" {
		return s
	}
	if cpu, ok := a.median(cpuKey); ok {
		return s + " (server CPU " + fmtNum(cpu) + " " + cpuUnit + ")"
	}
	return s + " (server CPU not reported)"
}

// rpsText renders a case's req/s with its server CPU per request.
func rpsText(a *serverAgg) string {
	v, _ := a.median("rps")
	return withCPU(a, v, "req/s", "server_cpu_us_per_req", "us/req")
}

// ceilingFigure is the ceiling's own req/s and server CPU per request: a reference row.
func ceilingFigure(j *judge, c string) verdict {
	a := j.agg(c, kindCeiling)
	if _, ok := a.median("rps"); !ok {
		return notMeasured("no ceiling result")
	}
	return verdict{measured: rpsText(a), state: stateReference}
}

// shareOfCeiling checks kind's req/s >= pct % of the ceiling's in the same case.
func shareOfCeiling(kind string, pct float64) func(j *judge, c string) verdict {
	return func(j *judge, c string) verdict {
		a, ce := j.agg(c, kind), j.agg(c, kindCeiling)
		v, ok := a.median("rps")
		if !ok {
			return notMeasured("no " + kind + " result")
		}
		cv, ok := ce.median("rps")
		if !ok || cv == 0 {
			return notMeasured("no ceiling result")
		}
		share := 100 * v / cv
		measured := fmt.Sprintf("%s = %.1f %% of the ceiling's %s req/s", rpsText(a), share, fmtNum(cv))
		cpu, ok1 := a.median("server_cpu_us_per_req")
		ccpu, ok2 := ce.median("server_cpu_us_per_req")
		if ok1 && ok2 && ccpu > 0 {
			measured += fmt.Sprintf("; CPU per request %.2fx the ceiling's", cpu/ccpu)
		}
		return judged(share >= pct, measured, fmt.Sprintf("%.1f %% (target >= %g %%)", share, pct))
	}
}

// timesNodeDurable checks dsd's req/s >= want times Node durable's in the same case.
func timesNodeDurable(want float64) func(j *judge, c string) verdict {
	return func(j *judge, c string) verdict {
		d, n := j.agg(c, kindDSD), j.agg(c, kindNodeDurable)
		dv, ok := d.median("rps")
		if !ok {
			return notMeasured("no dsd result")
		}
		nv, ok := n.median("rps")
		if !ok || nv == 0 {
			return notMeasured("no node-durable result")
		}
		r := dv / nv
		return judged(r >= want, fmt.Sprintf("dsd %s vs node-durable %s = %.2fx", rpsText(d), rpsText(n), r),
			fmt.Sprintf("%.2fx (target >= %gx)", r, want))
	}
}

// p99AtMost checks dsd's p99 latency <= limit ms.
func p99AtMost(limit float64) func(j *judge, c string) verdict {
	return func(j *judge, c string) verdict {
		a := j.agg(c, kindDSD)
		v, ok := a.median("p99_ms")
		if !ok {
			return notMeasured("no dsd p99")
		}
		p50, _ := a.median("p50_ms")
		return judged(v <= limit, fmt.Sprintf("p99 %s ms (p50 %s ms)", fmtNum(v), fmtNum(p50)),
			fmt.Sprintf("p99 %s ms (target <= %g ms)", fmtNum(v), limit))
	}
}

// subscriberMisses says when fewer subscribers connected than were asked for, in any round.
func subscriberMisses(a *serverAgg) []string {
	subs, _ := a.extreme("subscribers", false)
	if conn, ok := a.extreme("connected", true); ok && conn < subs {
		return []string{fmt.Sprintf("only %s of %s subscribers connected (target: all)", fmtInt(conn), fmtInt(subs))}
	}
	return nil
}

// rounds renders a round count.
func rounds(n int) string {
	if n == 1 {
		return "1 round"
	}
	return strconv.Itoa(n) + " rounds"
}

// ran reports whether a has at least one measured run.
func ran(a *serverAgg) bool { return a != nil && len(a.runs) > 0 }

// fanoutComplete checks that no event was lost or duplicated in any round, with every
// subscriber connected and the writer at its rate.
func fanoutComplete(c string) func(*judge) verdict {
	return func(j *judge) verdict {
		a := j.agg(c, kindDSD)
		if !ran(a) {
			return notMeasured("no dsd result")
		}
		conn, _ := a.extreme("connected", true)
		asked, _ := a.extreme("subscribers", false)
		got, _ := a.extreme("achieved_rate", true)
		rate, _ := a.extreme("rate", false)
		lost, dups := a.sum("lost"), a.sum("dups")
		measured := fmt.Sprintf("%s of %s subscribers connected, %s events delivered, %s lost, %s duplicated, "+
			"writer at %s of %s events/s (worst of %s)", fmtInt(conn), fmtInt(asked), fmtInt(a.sum("delivered")),
			fmtInt(lost), fmtInt(dups), fmtNum(got), fmtNum(rate), rounds(len(a.runs)))
		misses := subscriberMisses(a)
		if lost > 0 || dups > 0 {
			misses = append(misses, fmt.Sprintf("%s lost, %s duplicated (target 0)", fmtInt(lost), fmtInt(dups)))
		}
		if got < 0.95*rate {
			misses = append(misses, fmt.Sprintf("writer reached %s of %s events/s", fmtNum(got), fmtNum(rate)))
		}
		return judged(len(misses) == 0, measured, strings.Join(misses, "; "))
	}
}

// deliveryVsFloor checks dsd's server CPU per SSE delivery <= want times the write(2) floor
// measured in the same run (write-cpu-ns/op of BenchmarkLoopbackWriteFloor/conns=1000).
func deliveryVsFloor(c string, want float64) func(*judge) verdict {
	return func(j *judge) verdict {
		a := j.agg(c, kindDSD)
		srv, ok := a.median("server_cpu_us_per_delivery")
		if !ok {
			return notMeasured("no dsd server CPU per delivery")
		}
		floorNs, ok := j.agg(floorCase, kindDSD).median("write_cpu_ns_per_op")
		if !ok || floorNs == 0 {
			return notMeasured("no write(2) floor in this run: case write-floor")
		}
		floor := floorNs / 1000
		cl, _ := a.median("client_cpu_us_per_delivery")
		r := srv / floor
		return judged(r <= want, fmt.Sprintf("server CPU %s us per delivery (client %s us); write(2) floor %s us "+
			"(LoopbackWriteFloor/conns=1000: the writing thread's CPU per event written to one of 1,000 loopback sockets) = %.2fx",
			fmtNum(srv), fmtNum(cl), fmtNum(floor), r), fmt.Sprintf("%.2fx the floor (target <= %gx)", r, want))
	}
}

// fanoutP99 checks dsd's publish-to-receive p99 <= limit ms with every subscriber connected.
func fanoutP99(c string, limit float64) func(*judge) verdict {
	return func(j *judge) verdict {
		a := j.agg(c, kindDSD)
		v, ok := a.median("p99_ms")
		if !ok {
			return notMeasured("no dsd p99")
		}
		p50, _ := a.median("p50_ms")
		srv, _ := a.median("server_cpu_us_per_delivery")
		measured := fmt.Sprintf("p99 %s ms (p50 %s ms), server CPU %s us per delivery, %s lost", fmtNum(v), fmtNum(p50),
			fmtNum(srv), fmtInt(a.sum("lost")))
		misses := subscriberMisses(a)
		if v > limit {
			misses = append(misses, fmt.Sprintf("p99 %s ms (target <= %g ms)", fmtNum(v), limit))
		}
		return judged(len(misses) == 0, measured, strings.Join(misses, "; "))
	}
}

// bestNode returns the better median of key over the Node reference's two kinds (durable
// and in memory): the stricter comparison. found lists each kind's figure; silent lists the
// kinds that ran but produced no figure (a fan-out that delivered nothing).
func bestNode(j *judge, c string, m metric) (best float64, kind string, found, silent []string) {
	for _, k := range []string{kindNodeDurable, kindNode} {
		a := j.agg(c, k)
		v, ok := a.median(m.key)
		switch {
		case ok:
			found = append(found, k+" "+withCPU(a, v, m.unit, m.cpuKey, m.cpuUnit))
			if kind == "" || (m.lower && v < best) || (!m.lower && v > best) {
				best, kind = v, k
			}
		case ran(a):
			silent = append(silent, k)
		}
	}
	return best, kind, found, silent
}

// versusNode checks dsd's median of m.key against the better Node kind's: <= want times it
// for a lower-is-better key, >= want times it otherwise. A Node kind that ran and produced no
// figure (delivered nothing) counts as worse than any dsd figure.
func versusNode(c string, m metric, want float64) func(*judge) verdict {
	return func(j *judge) verdict {
		d := j.agg(c, kindDSD)
		dv, ok := d.median(m.key)
		if !ok {
			return notMeasured("no dsd result")
		}
		best, kind, found, silent := bestNode(j, c, m)
		measured := "dsd " + withCPU(d, dv, m.unit, m.cpuKey, m.cpuUnit)
		if len(found) > 0 {
			measured += " vs " + strings.Join(found, ", ")
		}
		var r float64
		if kind != "" && best != 0 {
			r = dv / best
			measured += fmt.Sprintf(" = %.3gx %s's", r, kind)
		}
		if len(silent) > 0 {
			measured += "; " + strings.Join(silent, ", ") + ": no figure in any round (counts as worse than any dsd figure)"
		}
		switch {
		case kind == "" && len(silent) > 0:
			return judged(true, measured, "")
		case kind == "" || best == 0:
			return notMeasured("no Node result")
		}
		ok = r >= want
		if m.lower {
			ok = r <= want
		}
		op := map[bool]string{true: "<=", false: ">="}[m.lower]
		return judged(ok, measured, fmt.Sprintf("%.3gx %s's (target %s %gx)", r, kind, op, want))
	}
}

// idleRSS checks dsd's RSS growth per idle SSE subscriber <= limit KiB with every subscriber
// connected.
func idleRSS(c string, limit float64) func(*judge) verdict {
	return func(j *judge) verdict {
		a := j.agg(c, kindDSD)
		v, ok := a.median("per_sub_kib")
		if !ok {
			return notMeasured("no dsd result")
		}
		conn, _ := a.extreme("connected", true)
		asked, _ := a.extreme("subscribers", false)
		before, _ := a.median("rss_before_kib")
		after, _ := a.median("rss_after_kib")
		measured := fmt.Sprintf("%s of %s subscribers connected; %s KiB RSS each (%s -> %s MiB)", fmtInt(conn),
			fmtInt(asked), fmtNum(v), fmtNum(before/1024), fmtNum(after/1024))
		misses := subscriberMisses(a)
		if v > limit {
			misses = append(misses, fmt.Sprintf("%s KiB each (target <= %g KiB)", fmtNum(v), limit))
		}
		return judged(len(misses) == 0, measured, strings.Join(misses, "; "))
	}
}

// caseTargets judges a target with the named cases' own Checks (target 6: the many-1m
// cases), each part labelled with its case.
func caseTargets(names ...string) func(*judge) verdict {
	return func(j *judge) verdict {
		parts := make([]verdict, len(names))
		for i, name := range names {
			parts[i] = caseCheck(j, name)
		}
		return combineAll(names, parts)
	}
}

// caseCheck is the verdict of one case's Check on this run.
func caseCheck(j *judge, name string) verdict {
	c, ok := caseByName(name)
	if !ok || c.Check == nil {
		return notMeasured("no " + name + " case in this dsbench")
	}
	d := j.agg(name, kindDSD)
	if !ran(d) {
		return notMeasured("no dsd result")
	}
	r := c.Check(j.res.byCase[name])
	return judged(r.ok, cell(c, d), r.why+" (target: "+c.Target+")")
}
