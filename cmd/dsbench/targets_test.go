package main

import (
	"slices"
	"strings"
	"testing"
)

// resultsOf loads RESULT lines (one per line; "server case key=value ..." shorthand: the
// first two fields are the server and case tags).
func resultsOf(t *testing.T, lines string) *results {
	t.Helper()
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(lines), "\n") {
		if f := strings.Fields(l); len(f) >= 2 {
			b.WriteString("RESULT workload=w server=" + f[0] + " case=" + f[1] + " " + strings.Join(f[2:], " ") + "\n")
		}
	}
	var res results
	if err := loadResults(strings.NewReader(b.String()), &res); err != nil {
		t.Fatal(err)
	}
	return &res
}

// findRow returns the one target row whose number is num and whose goal and workload
// contain the given texts.
func findRow(t *testing.T, num, goal, workload string) targetRow {
	t.Helper()
	var found []targetRow
	for _, r := range targetRows {
		if r.Num == num && strings.Contains(r.Goal, goal) && strings.Contains(r.Workload, workload) {
			found = append(found, r)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d target rows match %s / %q / %q, want 1", len(found), num, goal, workload)
	}
	return found[0]
}

// The append rows' usual peers: the ceiling at 20,000 req/s, Node durable at 1,000.
const appendPeers = `
ceiling append-100 rps=20000 server_cpu_us_per_req=20
ceiling wrk-append-100 rps=25000 server_cpu_us_per_req=18
node-durable append-100 rps=1000 server_cpu_us_per_req=600
node-durable wrk-append-100 rps=900
`

// The fan-out rows' usual figures: a floor of 8 us per write, Node in memory at 700 ms p99,
// Node durable delivering nothing.
const fanoutPeers = `
dsd write-floor/conns=1000 write_cpu_ns_per_op=8000
dsd write-floor/conns=1 write_cpu_ns_per_op=2000
node fanout-1000 subscribers=1000 connected=1000 p99_ms=700 rate=50 achieved_rate=31
node-durable fanout-1000 subscribers=1000 connected=734 rate=50 achieved_rate=0.45
`

// A baseline as tools/bench/baseline.txt writes it.
const baselineLines = `
dsd batch-100 records_per_s=300000 source=BENCHMARKS.md_peers_table cpu=AMD_EPYC
dsd startup ready_ms=40 shape=streams,total streams=10000 total=1GiB source=BENCHMARKS.md_peers_table cpu=AMD_EPYC
dsd record-reads/record=start ns_per_op=7500 source=Hot_paths
dsd record-reads/record=end ns_per_op=5000 source=Hot_paths
`

func TestTargetRowsJudge(t *testing.T) {
	tests := []struct {
		name                string
		num, goal, workload string
		run, base           string
		want                verdictState
		inMeasured, inWhy   []string
		notWhy              string // a part that meets its target and must not be named in why
	}{
		{name: "100 streams at 60 % of the ceiling on both generators",
			num: "1", goal: ">= 50 % of the ceiling", run: appendPeers + `
dsd append-100 rps=12000 server_cpu_us_per_req=70
dsd wrk-append-100 rps=15000 server_cpu_us_per_req=65`,
			want: stateMet, inMeasured: []string{"dsbench: 12,000 req/s (server CPU 70.0 us/req) = 60.0 % of the ceiling's 20,000 req/s",
				"CPU per request 3.50x the ceiling's", "wrk: 15,000 req/s (server CPU 65.0 us/req) = 60.0 %"}},
		{name: "wrk below the share while dsbench meets it",
			num: "1", goal: ">= 50 % of the ceiling", run: appendPeers + `
dsd append-100 rps=12000
dsd wrk-append-100 rps=10000`,
			want: stateMissed, inWhy: []string{"wrk 40.0 % (target >= 50 %)"}, notWhy: "dsbench",
			inMeasured: []string{"(server CPU not reported)"}},
		{name: "no ceiling run",
			num: "1", goal: ">= 50 % of the ceiling", run: "dsd append-100 rps=12000",
			want: stateUnmeasured, inWhy: []string{"dsbench: no ceiling result", "wrk: no dsd result"}},
		{name: "wrk not run: dsbench alone decides",
			num: "1", goal: ">= 40 % of the ceiling", run: `
ceiling append-1 rps=20000
dsd append-1 rps=9000`,
			want: stateMet, inMeasured: []string{"45.0 %", "wrk: not measured"}},
		{name: "12x Node durable missed with the ratio and the target",
			num: "1", goal: ">= 12x", run: appendPeers + `
dsd append-100 rps=8000 server_cpu_us_per_req=90
dsd wrk-append-100 rps=11700`,
			want: stateMissed, inWhy: []string{"dsbench 8.00x (target >= 12x)"}, notWhy: "wrk",
			inMeasured: []string{"dsd 8,000 req/s (server CPU 90.0 us/req) vs node-durable 1,000 req/s (server CPU 600 us/req) = 8.00x"}},
		{name: "12x without a Node durable run",
			num: "1", goal: ">= 12x", run: "dsd append-100 rps=8000",
			want: stateUnmeasured, inWhy: []string{"no node-durable result"}},
		{name: "p99 above 10 ms",
			num: "1", goal: "p99 <= 10 ms", run: `
dsd append-100 p99_ms=13.5 p50_ms=4
dsd wrk-append-100 p99_ms=9`,
			want: stateMissed, inWhy: []string{"dsbench p99 13.5 ms (target <= 10 ms)"}, notWhy: "wrk"},
		{name: "no-sync at 75 % of the ceiling",
			num: "2", workload: "100 streams", run: appendPeers + `
dsd-nosync append-100 rps=15000 server_cpu_us_per_req=40`,
			want: stateMet, inMeasured: []string{"75.0 %", "2.00x the ceiling's"}},
		{name: "no-sync at 65 % of the ceiling",
			num: "2", workload: "1 stream", run: `
ceiling append-1 rps=20000
dsd-nosync append-1 rps=13000`,
			want: stateMissed, inWhy: []string{"dsbench 65.0 % (target >= 70 %)"}},
		{name: "ceiling reference row",
			num: "-", workload: "append-100", run: appendPeers,
			want: stateReference, inMeasured: []string{"dsbench: 20,000 req/s (server CPU 20.0 us/req)", "wrk: 25,000 req/s"}},
		{name: "fan-out complete in every round",
			num: "3", goal: "0 lost", run: `
dsd fanout-1000 subscribers=1000 connected=1000 delivered=400000 lost=0 dups=0 rate=50 achieved_rate=50.1
dsd fanout-1000 subscribers=1000 connected=1000 delivered=400000 lost=0 dups=0 rate=50 achieved_rate=49.9`,
			want: stateMet, inMeasured: []string{"1,000 of 1,000 subscribers connected, 800,000 events delivered, 0 lost, 0 duplicated, writer at 49.9 of 50.0 events/s (worst of 2 rounds)"}},
		{name: "a loss in one round of three counts although the median is 0",
			num: "3", goal: "0 lost", run: `
dsd fanout-1000 subscribers=1000 connected=1000 lost=0 dups=0 rate=50 achieved_rate=50
dsd fanout-1000 subscribers=1000 connected=1000 lost=3 dups=0 rate=50 achieved_rate=50
dsd fanout-1000 subscribers=1000 connected=1000 lost=0 dups=0 rate=50 achieved_rate=50`,
			want: stateMissed, inWhy: []string{"3 lost, 0 duplicated (target 0)"}},
		{name: "not all subscribers connected, writer slow",
			num: "3", goal: "0 lost", run: `
dsd fanout-1000 subscribers=1000 connected=950 lost=0 dups=0 rate=50 achieved_rate=40`,
			want: stateMissed, inWhy: []string{"only 950 of 1,000 subscribers connected", "writer reached 40.0 of 50.0 events/s"}},
		{name: "a short run with 200 subscribers does not judge the target",
			num: "3", goal: "0 lost", run: `
dsd fanout-1000 subscribers=200 connected=200 lost=0 dups=0 rate=50 achieved_rate=50`,
			want: stateUnmeasured, inWhy: []string{"run with subscribers=200; the target is stated for subscribers=1000"},
			inMeasured: []string{"200 of 200 subscribers connected"}},
		{name: "fan-out not run",
			num: "3", goal: "0 lost", run: appendPeers,
			want: stateUnmeasured, inWhy: []string{"no dsd result"}},
		{name: "CPU per delivery 1.25x the floor",
			num: "3", goal: "write(2) floor", run: fanoutPeers + `
dsd fanout-1000 subscribers=1000 server_cpu_us_per_delivery=10 client_cpu_us_per_delivery=12`,
			want: stateMet, inMeasured: []string{"server CPU 10.0 us per delivery (client 12.0 us); write(2) floor 8.00 us", "= 1.25x"}},
		{name: "CPU per delivery 2x the floor",
			num: "3", goal: "write(2) floor", run: fanoutPeers + `
dsd fanout-1000 subscribers=1000 server_cpu_us_per_delivery=16`,
			want: stateMissed, inWhy: []string{"2.00x the floor (target <= 1.5x)"}},
		{name: "no floor in the run",
			num: "3", goal: "write(2) floor", run: `dsd fanout-1000 subscribers=1000 server_cpu_us_per_delivery=10`,
			want: stateUnmeasured, inWhy: []string{"no write(2) floor in this run"}},
		{name: "p99 at 500 subscribers",
			num: "3", goal: "500 subscribers", run: `
dsd fanout-500 subscribers=500 connected=500 p99_ms=8.5 p50_ms=4 lost=0 server_cpu_us_per_delivery=12`,
			want: stateMet, inMeasured: []string{"p99 8.50 ms (p50 4.00 ms), server CPU 12.0 us per delivery, 0 lost"}},
		{name: "p99 at 500 subscribers above 10 ms",
			num: "3", goal: "500 subscribers", run: `dsd fanout-500 subscribers=500 connected=500 p99_ms=12`,
			want: stateMissed, inWhy: []string{"p99 12.0 ms (target <= 10 ms)"}},
		{name: "p99 at 1,000 against Node in memory, Node durable silent",
			num: "3", goal: "1/5 of the Node", run: fanoutPeers + `dsd fanout-1000 subscribers=1000 p99_ms=70`,
			want: stateMet, inMeasured: []string{"dsd 70.0 ms p99 vs node 700 ms p99 = 0.1x node's",
				"node-durable: no figure in any round"}},
		{name: "p99 at 1,000 above a fifth of Node's",
			num: "3", goal: "1/5 of the Node", run: fanoutPeers + `dsd fanout-1000 subscribers=1000 p99_ms=200`,
			want: stateMissed, inWhy: []string{"0.286x node's (target <= 0.2x)"}},
		{name: "p99 at 1,000 when no Node kind ran",
			num: "3", goal: "1/5 of the Node", run: `dsd fanout-1000 subscribers=1000 p99_ms=20`,
			want: stateUnmeasured, inWhy: []string{"no Node result"}},
		{name: "idle subscribers under 1 KiB each",
			num: "4", run: `dsd idle-sse-10000 subscribers=10000 connected=10000 per_sub_kib=0.9 rss_before_kib=10240 rss_after_kib=19456`,
			want: stateMet, inMeasured: []string{"10,000 of 10,000 subscribers connected; 0.90 KiB RSS each (10.0 -> 19.0 MiB)"}},
		{name: "idle subscribers at 3.4 KiB",
			num: "4", run: `dsd idle-sse-10000 subscribers=10000 connected=10000 per_sub_kib=3.4`,
			want: stateMissed, inWhy: []string{"3.40 KiB each (target <= 1 KiB)"}},
		{name: "idle subscribers: a short run of 2,000 does not judge the target",
			num: "4", run: `dsd idle-sse-10000 subscribers=2000 connected=2000 per_sub_kib=0.5`,
			want: stateUnmeasured, inWhy: []string{"run with subscribers=2000; the target is stated for subscribers=10000"}},
		{name: "idle subscribers not all connected",
			num: "4", run: `dsd idle-sse-10000 subscribers=10000 connected=9000 per_sub_kib=0.5`,
			want: stateMissed, inWhy: []string{"only 9,000 of 10,000 subscribers connected (target: all)"}},
		{name: "replay judged against the better Node kind",
			num: "5", run: `
dsd replay-500 clients=500 stream_bytes=204800 mb_per_s=600 server_cpu_us_per_mb=900
node-durable replay-500 mb_per_s=100
node replay-500 mb_per_s=300`,
			want: stateMissed, inWhy: []string{"2x node's (target >= 3x)"},
			inMeasured: []string{"dsd 600 MB/s (server CPU 900 us/MB) vs node-durable 100 MB/s (server CPU not reported), node 300 MB/s"}},
		{name: "replay with 100 clients does not judge the target",
			num: "5", run: `
dsd replay-500 clients=100 stream_bytes=204800 mb_per_s=1000
node replay-500 mb_per_s=300`,
			want: stateUnmeasured, inWhy: []string{"run with clients=100; the target is stated for clients=500 stream_bytes=204800"},
			inMeasured: []string{"= 3.33x node's"}},
		{name: "replay 3.3x the better Node kind",
			num: "5", run: `
dsd replay-500 clients=500 stream_bytes=204800 mb_per_s=1000
node-durable replay-500 mb_per_s=100
node replay-500 mb_per_s=300`,
			want: stateMet, inMeasured: []string{"= 3.33x node's"}},
		{name: "append-batch within 10 % of its baseline, on another CPU",
			num: "7", goal: "append-batch", base: baselineLines, run: `
dsd batch-100 records_per_s=285000 server_cpu_us_per_record=2.5`,
			want: stateMet, inMeasured: []string{"285,000 records/s (server CPU 2.50 us/record) vs 300,000 records/s = 0.95x",
				"baseline: BENCHMARKS.md peers table (taken on AMD EPYC, this run on Intel Xeon: another machine)"}},
		{name: "append-batch 20 % below its baseline",
			num: "7", goal: "append-batch", base: baselineLines, run: `dsd batch-100 records_per_s=240000`,
			want: stateMissed, inWhy: []string{"0.80x the baseline's 300,000 records/s (target: within 10 %)"}},
		{name: "start-up slower than its baseline (lower is better)",
			num: "7", goal: "start-up", base: baselineLines, run: `dsd startup ready_ms=50 streams=10000 total=1GiB`,
			want: stateMissed, inWhy: []string{"1.25x the baseline's 40.0 ms"}},
		{name: "start-up with fewer streams than the baseline's",
			num: "7", goal: "start-up", base: baselineLines, run: `dsd startup ready_ms=20 streams=1000 total=64MiB`,
			want: stateUnmeasured, inWhy: []string{"run with streams=1000 total=64MiB; the baseline has streams=10000 total=1GiB"},
			inMeasured: []string{"20.0 ms vs 40.0 ms = 0.50x", "baseline: BENCHMARKS.md peers table"}},
		{name: "no baseline file",
			num: "7", goal: "start-up", run: `dsd startup ready_ms=30`,
			want: stateUnmeasured, inWhy: []string{"no baseline figure for startup"}},
		{name: "record reads: one sub-benchmark regressed",
			num: "7", goal: "record reads", base: baselineLines, run: `
dsd record-reads/record=start ns_per_op=7000
dsd record-reads/record=end ns_per_op=6000`,
			want: stateMissed, inWhy: []string{"record=end 1.20x the baseline's 5.00 us"}, notWhy: "record=start",
			inMeasured: []string{"record=start: 7.00 us vs 7.50 us = 0.93x", "baseline: Hot paths"}},
		{name: "record reads: one sub-benchmark missing leaves the row unmeasured",
			num: "7", goal: "record reads", base: baselineLines, run: `dsd record-reads/record=start ns_per_op=7000`,
			want: stateUnmeasured, inWhy: []string{"record=end: no dsd result in this run"}, notWhy: "record=start"},
		{name: "record reads not run",
			num: "7", goal: "record reads", base: baselineLines, run: appendPeers,
			want: stateUnmeasured, inWhy: []string{"no dsd result in this run"}, notWhy: "record=start"},
		{name: "target 6 not run",
			num: "6", run: appendPeers,
			want: stateUnmeasured, inWhy: []string{"no dsd result"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := &results{}
			if tt.base != "" {
				base = resultsOf(t, tt.base)
			}
			j := &judge{res: resultsOf(t, tt.run), base: base, cpu: "Intel Xeon"}
			v := findRow(t, tt.num, tt.goal, tt.workload).Judge(j)
			if v.state != tt.want {
				t.Fatalf("state %d, want %d: %+v", v.state, tt.want, v)
			}
			for _, s := range tt.inMeasured {
				if !strings.Contains(v.measured, s) {
					t.Errorf("measured %q lacks %q", v.measured, s)
				}
			}
			for _, s := range tt.inWhy {
				if !strings.Contains(v.why, s) {
					t.Errorf("why %q lacks %q", v.why, s)
				}
			}
			if tt.notWhy != "" && strings.Contains(v.why, tt.notWhy) {
				t.Errorf("why %q names %q, which meets its target", v.why, tt.notWhy)
			}
		})
	}
}

func TestMetCell(t *testing.T) {
	for _, tt := range []struct {
		v    verdict
		want string
	}{
		{verdict{state: stateMet}, "yes"},
		{verdict{state: stateMissed, why: "22.2 % (target >= 50 %)"}, "**no**: 22.2 % (target >= 50 %)"},
		{notMeasured("no ceiling result"), "**no**: not measured (no ceiling result)"},
		{verdict{state: stateReference}, "-"},
	} {
		if got := tt.v.metCell(); got != tt.want {
			t.Errorf("metCell(%+v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

// The many-1m cases' own Checks fill target 6's row, and it is met only when both are.
func TestTargetSixUsesItsCasesChecks(t *testing.T) {
	saved := benchCases
	t.Cleanup(func() { benchCases = saved })
	benchCases = slices.DeleteFunc(slices.Clone(saved), func(c benchCase) bool { return strings.HasPrefix(c.Name, "many-1m") })
	row := findRow(t, "6", "", "")
	j := &judge{res: resultsOf(t, "dsd many-1m per_stream_b=900"), base: &results{}}
	if v := row.Judge(j); v.state != stateUnmeasured || !strings.Contains(v.why, "many-1m: no many-1m case in this dsbench") {
		t.Fatalf("before the many-1m cases exist: %+v", v)
	}
	ready := func(a map[string]*serverAgg) checkResult { return maxOf(a[kindDSD], "ready_ms", 1000) }
	rss := func(a map[string]*serverAgg) checkResult { return maxOf(a[kindDSD], "per_stream_b", 1024) }
	benchCases = append(benchCases[:len(benchCases):len(benchCases)],
		benchCase{Name: "many-1m", Title: "1,000,000 streams", Metric: "per_stream_b", Unit: "B", Lower: true,
			Target: "<= 1 KiB RSS per stream", Check: rss})
	if v := row.Judge(j); v.state != stateUnmeasured || !strings.Contains(v.why, "many-1m-startup: no many-1m-startup case") {
		t.Fatalf("many-1m met, many-1m-startup missing: want unmeasured, got %+v", v)
	}
	benchCases = append(benchCases, benchCase{Name: "many-1m-startup", Title: "restart", Metric: "ready_ms", Unit: "ms",
		Lower: true, Target: "start-up within 1 s", Check: ready})
	j.res = resultsOf(t, "dsd many-1m per_stream_b=900\ndsd many-1m-startup ready_ms=1500")
	if v := row.Judge(j); v.state != stateMissed || !strings.Contains(v.why, "many-1m-startup ready_ms 1.5e+03 > 1000 (target: start-up within 1 s)") ||
		strings.Contains(v.why, "per_stream_b") || !strings.Contains(v.measured, "many-1m: 900") {
		t.Fatalf("start-up 1.5 s: %+v", v)
	}
	j.res = resultsOf(t, "dsd many-1m per_stream_b=900\ndsd many-1m-startup ready_ms=800")
	if v := row.Judge(j); v.state != stateMet {
		t.Fatalf("both met: %+v", v)
	}
	if got := targetsOf("many-1m-startup"); got != "6" {
		t.Fatalf("peers table's targets of many-1m-startup = %q, want 6", got)
	}
	if got := targetsOf("append-100"); got != "1, 2" {
		t.Fatalf("peers table's targets of append-100 = %q, want \"1, 2\"", got)
	}
}

// tools/bench/baseline.txt holds a figure with its source for every target 7 row, and the
// shape keys it names.
func TestBaselineFileCoversTargetSeven(t *testing.T) {
	var base results
	if err := loadFiles(&base, "../../tools/bench/baseline.txt"); err != nil {
		t.Fatal(err)
	}
	var reads int
	for _, c := range base.cases {
		b := base.byCase[c][kindDSD]
		if !ran(b) || b.runs[0]["source"] == "" {
			t.Errorf("baseline %s: no dsd line with a source", c)
			continue
		}
		for _, kv := range baselineShape(b) {
			if kv.Val == "" {
				t.Errorf("baseline %s: shape key %s has no value", c, kv.Key)
			}
		}
		if strings.HasPrefix(c, recordReadPrefix) {
			reads++
		}
	}
	for _, c := range []string{"batch-100", "replay-bootstrap-500", "startup"} {
		if base.byCase[c] == nil {
			t.Errorf("baseline lacks %s", c)
		}
	}
	if reads != 6 {
		t.Errorf("baseline has %d record-read figures, want BenchmarkRecordRead's 6", reads)
	}
	j := &judge{res: &results{}, base: &base}
	for _, r := range targetRows {
		if r.Num == "7" {
			if v := r.Judge(j); v.state != stateUnmeasured || strings.Contains(v.why, "no baseline") {
				t.Errorf("row %q without a run: want unmeasured for want of this run's figure, got %+v", r.Goal, v)
			}
		}
	}
}
