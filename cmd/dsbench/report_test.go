package main

import (
	"strings"
	"testing"
)

const sampleResults = `
noise line
RESULT workload=append server=node-durable round=1 case=append-100 rps=1000 p99_ms=70 errors=0
RESULT workload=append server=dsd round=1 case=append-100 rps=12000 p99_ms=20 errors=0
RESULT workload=append server=node-durable round=2 case=append-100 rps=1400 p99_ms=60 errors=0
RESULT workload=append server=dsd round=2 case=append-100 rps=8000 p99_ms=30 errors=2 status_503=2
RESULT workload=append server=node-durable round=3 case=append-100 rps=1200 p99_ms=65 errors=0
RESULT workload=wrk-append server=node-durable round=1 case=wrk-append-100 rps=1000 p99_ms=60 errors=0
RESULT workload=wrk-append server=dsd round=1 case=wrk-append-100 rps=9000 p99_ms=20 errors=0
RESULT workload=append server=dsd round=3 case=append-100 rps=13000 p99_ms=22 errors=0
RESULT workload=batch server=node-durable round=1 case=batch-100 unsupported=1
RESULT workload=batch server=dsd round=1 case=batch-100 records_per_s=90000 batch_vs_single=6.1 single_records_per_s=14754 p99_ms=40
RESULT workload=fanout server=node-durable round=1 case=fanout-1000 subscribers=1000 connected=1000 p99_ms=30 lost=0 dups=0 rate=50 achieved_rate=20
RESULT workload=fanout server=dsd round=1 case=fanout-1000 subscribers=1000 connected=1000 p99_ms=8 lost=3 dups=0 rate=50 achieved_rate=50 server_cpu_us_per_delivery=9.5 client_cpu_us_per_delivery=19
RESULT workload=replay server=node-durable round=1 case=replay-500 failed=500 incomplete=0
RESULT workload=replay server=node-durable round=2 case=replay-500 mb_per_s=90 p99_ms=900 failed=0 incomplete=0
RESULT workload=replay server=dsd round=1 case=replay-500 clients=500 stream_bytes=204800 mb_per_s=700 p99_ms=700 failed=0 incomplete=0 server_cpu_us_per_mb=950 client_cpu_us_per_mb=400
RESULT workload=replay server=node round=1 case=replay-500 failed=500 incomplete=0
RESULT workload=idle-sse server=dsd round=1 case=idle-sse-10000 subscribers=10000 connected=9000 per_sub_kib=3
RESULT workload=append round=1 rps=5
`

func loadSample(t *testing.T) *results {
	t.Helper()
	var res results
	if err := loadResults(strings.NewReader(sampleResults), &res); err != nil {
		t.Fatal(err)
	}
	return &res
}

func TestReportMediansAndRatio(t *testing.T) {
	res := loadSample(t)
	a := res.byCase["append-100"]
	if v, _ := a[kindDSD].median("rps"); v != 12000 {
		t.Fatalf("dsd median rps = %v, want 12000 (of 8000, 12000, 13000)", v)
	}
	if v, _ := a[kindNodeDurable].median("rps"); v != 1200 {
		t.Fatalf("node median rps = %v, want 1200", v)
	}
	if r, ok := ratio(a, "rps"); !ok || r != 10 {
		t.Fatalf("ratio = %v %v, want 10", r, ok)
	}
	two := &serverAgg{runs: []map[string]string{{"x": "1"}, {"x": "4"}}}
	if v, _ := two.median("x"); v != 2.5 {
		t.Fatalf("median of an even count = %v, want 2.5", v)
	}
	var none *serverAgg
	if _, ok := none.median("x"); ok {
		t.Fatal("nil aggregate has a median")
	}
}

func TestReportRendersTable(t *testing.T) {
	res := loadSample(t)
	var b strings.Builder
	renderSection(&b, res, &results{}, []KV{{"nproc", "2"}}, "ROUNDS=3", "make bench-peers")
	out := b.String()
	for _, want := range []string{
		"| node-durable | node | dsd |",
		"12,000 (p99 22.0 ms) [2 errors, median of 3]",
		"| 10x |",
		"unsupported",
		"### Issue 19's targets",
		"| 3 | 0 lost (every subscriber connected, writer at 50 events/s) | SSE fan-out, 1,000 subscribers, 100 B | " +
			"1,000 of 1,000 subscribers connected, 0 events delivered, 3 lost, 0 duplicated, writer at 50.0 of 50.0 events/s " +
			"(worst of 1 round) | **no**: 3 lost, 0 duplicated (target 0) |",
		"| 5 | aggregate MB/s >= 3x the Node reference's |",
		"dsd 700 MB/s (server CPU 950 us/MB) vs node-durable 90.0 MB/s (server CPU not reported) = 7.78x node-durable's; node: no figure in any round (counts as worse than any dsd figure) | yes |",
		"| 6 | 1,000,000 streams",
		"| many streams (cases many-1m, many-1m-startup) | not measured | **no**: not measured (no dsd result) |",
		"[only 9000 of 10000 subscribers connected]",
		"90,000 (p99 40.0 ms) [6.1x the 14,754 records/s of single POSTs]",
		"30.0 [writer reached only 20.0 of 50.0 appends/s]",
		"90.0 (p99 900 ms) [500 failed, median of 1 runs; 1 had no value]",
		"700 (p99 700 ms) [server CPU 950 us/MB, client CPU 400 us/MB]",
		"| no data [500 failed] |",
		"- nproc: 2",
		"```\nmake bench-peers\n```",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("section lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "round=1 rps=5") || res.byCase[""] != nil {
		t.Error("a RESULT without case/server tags was counted")
	}
}

func TestReportCellShowsFanoutCPUPerDelivery(t *testing.T) {
	res := loadSample(t)
	c, _ := caseByName("fanout-1000")
	got := cell(c, res.byCase["fanout-1000"][kindDSD])
	if !strings.Contains(got, "CPU per delivery: server 9.50 us, client 19.0 us") {
		t.Fatalf("fan-out cell %q lacks the CPU per delivery", got)
	}
	if got := cell(c, res.byCase["fanout-1000"][kindNodeDurable]); strings.Contains(got, "CPU per delivery") {
		t.Fatalf("node cell %q shows a CPU figure it has no data for", got)
	}
}
