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
RESULT workload=fanout server=node-durable round=1 case=fanout-1000 p99_ms=30 lost=0 dups=0 rate=50 achieved_rate=20
RESULT workload=fanout server=dsd round=1 case=fanout-1000 p99_ms=8 lost=3 dups=0 server_cpu_us_per_delivery=9.5 client_cpu_us_per_delivery=19
RESULT workload=replay server=node-durable round=1 case=replay-500 failed=500 incomplete=0
RESULT workload=replay server=node-durable round=2 case=replay-500 p99_ms=900 failed=0 incomplete=0
RESULT workload=replay server=dsd round=1 case=replay-500 p99_ms=700 failed=0 incomplete=0
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

func TestReportTargetsJudgeDSD(t *testing.T) {
	res := loadSample(t)
	c, _ := caseByName("append-100")
	if r := c.Check(res.byCase["append-100"]); !r.ok {
		t.Fatalf("append-100: 10x and p99 22 ms should meet the target: %s", r.why)
	}
	c, _ = caseByName("wrk-append-100")
	if r := c.Check(res.byCase["wrk-append-100"]); r.ok || !strings.Contains(r.why, "9.00x < 10x") {
		t.Fatalf("wrk-append-100 at 9x: want a miss explaining the ratio, got %+v", r)
	}
	c, _ = caseByName("fanout-1000")
	if r := c.Check(res.byCase["fanout-1000"]); r.ok || !strings.Contains(r.why, "lost") {
		t.Fatalf("fanout with 3 lost events passed the target (%+v)", r)
	}
	c, _ = caseByName("replay-500")
	if r := c.Check(res.byCase["replay-500"]); !r.ok {
		t.Fatalf("dsd 700 ms vs Node durable's only p99 900 ms: %s", r.why)
	}
	noNode := map[string]*serverAgg{kindDSD: res.byCase["replay-500"][kindDSD],
		kindNodeDurable: {runs: []map[string]string{{"failed": "500"}}}}
	if r := c.Check(noNode); !r.ok {
		t.Fatalf("Node durable read nothing (no p99): dsd's 700 ms must count as not worse: %s", r.why)
	}
	c, _ = caseByName("idle-sse-10000")
	if r := c.Check(res.byCase["idle-sse-10000"]); r.ok {
		t.Fatal("9,000 of 10,000 subscribers connected passed the idle-sse target")
	}
	c, _ = caseByName("batch-100")
	if r := c.Check(res.byCase["batch-100"]); !r.ok {
		t.Fatal("batch 6.1x should meet >= 5x")
	}
}

func TestReportRendersTable(t *testing.T) {
	res := loadSample(t)
	var b strings.Builder
	renderSection(&b, res, []KV{{"nproc", "2"}}, "ROUNDS=3", "make bench-peers")
	out := b.String()
	for _, want := range []string{
		"| node-durable | node | dsd |",
		"12,000 (p99 22.0 ms) [2 errors, median of 3]",
		"| 10x |",
		"unsupported",
		"**no**: lost 3 > 0",
		"[only 9000 of 10000 subscribers connected]",
		"90,000 (p99 40.0 ms) [6.1x the 14,754 records/s of single POSTs]",
		"30.0 [writer reached only 20.0 of 50.0 appends/s]",
		"900 [500 failed, median of 1 runs; 1 had no value]",
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
