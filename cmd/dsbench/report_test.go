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
	if r := c.Check(res.byCase["append-100"]); r.ok || !strings.Contains(r.why, "no dsd or ceiling result") ||
		!strings.Contains(r.why, "p99_ms 22 > 10") {
		t.Fatalf("append-100 without a ceiling run and p99 22 ms: want a miss naming both, got %+v", r)
	}
	c, _ = caseByName("wrk-append-100")
	if r := c.Check(res.byCase["wrk-append-100"]); r.ok || !strings.Contains(r.why, "9.00x < 12x") {
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

// ceilingAggs is append-100 with dsd at 12,000 req/s (p99 8 ms), Node durable 900, the
// ceiling 20,000 and dsd-nosync at nosync req/s.
func ceilingAggs(nosync string) map[string]*serverAgg {
	one := func(kv ...string) *serverAgg {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return &serverAgg{runs: []map[string]string{m}}
	}
	return map[string]*serverAgg{
		kindDSD:         one("rps", "12000", "p99_ms", "8", "server_cpu_us_per_req", "60"),
		kindNodeDurable: one("rps", "900"),
		kindCeiling:     one("rps", "20000", "server_cpu_us_per_req", "20"),
		kindNoSync:      one("rps", nosync, "server_cpu_us_per_req", "40"),
	}
}

func TestReportJudgesAgainstTheCeiling(t *testing.T) {
	c, _ := caseByName("append-100")
	if r := c.Check(ceilingAggs("15000")); !r.ok {
		t.Fatalf("dsd 60 %%, no-sync 75 %% of the ceiling, 13x Node durable, p99 8 ms: %s", r.why)
	}
	if r := c.Check(ceilingAggs("13000")); r.ok || !strings.Contains(r.why, "dsd-nosync 65 % of the ceiling < 70 %") {
		t.Fatalf("no-sync at 65 %% of the ceiling: want a miss naming it, got %+v", r)
	}
	res := &results{byCase: map[string]map[string]*serverAgg{"append-100": ceilingAggs("15000")}}
	var b strings.Builder
	renderCeilingNote(&b, res)
	want := "- append-100: ceiling 20,000 req/s (server CPU 20.0 us/req); dsd 60 % (60.0 us/req = 3.00x the ceiling's); " +
		"dsd-nosync 75 % (40.0 us/req = 2.00x the ceiling's)"
	if !strings.Contains(b.String(), want) {
		t.Fatalf("ceiling note lacks %q:\n%s", want, b.String())
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
