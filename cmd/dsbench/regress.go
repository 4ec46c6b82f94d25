package main

import (
	"fmt"
	"strings"
)

// Target 7 of issue 19: nothing regresses. Each figure is compared with the one
// BENCHMARKS.md carried before the work, kept as RESULT lines in a baseline file
// (tools/bench/baseline.txt, `dsbench report --baseline`) whose source= and cpu= keys say
// where it comes from; a figure worse than its baseline by more than regressionTolerance is
// a regression.

// regressionPart compares this run's dsd median for case c with the baseline's, when the
// run has the baseline's shape (the keys its shape= lists, e.g. streams=10000 total=1GiB).
func regressionPart(j *judge, c string, m metric) verdict {
	v, ok := j.agg(c, kindDSD).median(m.key)
	if !ok {
		return notMeasured("no dsd result in this run")
	}
	base := j.base.byCase[c][kindDSD]
	b, ok := base.median(m.key)
	if !ok || b == 0 {
		return notMeasured("no baseline figure for " + c)
	}
	r := v / b
	ok = r >= 1-regressionTolerance
	if m.lower {
		ok = r <= 1+regressionTolerance
	}
	measured := fmt.Sprintf("%s vs %s %s = %.2fx", withCPU(j.agg(c, kindDSD), v*m.scale, m.unit, m.cpuKey, m.cpuUnit),
		fmtNum(b*m.scale), m.unit, r)
	if got, stated := shapeMiss(j.agg(c, kindDSD), baselineShape(base)); got != "" {
		return verdict{measured: measured, state: stateUnmeasured, why: "run with " + got + "; the baseline has " + stated}
	}
	return judged(ok, measured, fmt.Sprintf("%.2fx the baseline's %s %s (target: within %.0f %%)", r, fmtNum(b*m.scale),
		m.unit, 100*regressionTolerance))
}

// baselineShape returns the keys (and values) a baseline's shape= names.
func baselineShape(b *serverAgg) []KV {
	var out []KV
	if ran(b) {
		for _, k := range strings.FieldsFunc(b.runs[0]["shape"], func(r rune) bool { return r == ',' }) {
			out = append(out, KV{k, b.runs[0][k]})
		}
	}
	return out
}

// baselineSource says where case c's baseline comes from, and flags a baseline taken on
// another CPU model than this run.
func baselineSource(j *judge, c string) string {
	b := j.base.byCase[c][kindDSD]
	if !ran(b) {
		return ""
	}
	src := strings.ReplaceAll(b.runs[0]["source"], "_", " ")
	s := "; baseline: " + src
	if cpu := strings.ReplaceAll(b.runs[0]["cpu"], "_", " "); cpu != "" && j.cpu != "" && cpu != j.cpu {
		s += " (taken on " + cpu + ", this run on " + j.cpu + ": another machine)"
	}
	return s
}

// noRegression is a target 7 row on one case.
func noRegression(c string, m metric) func(*judge) verdict {
	return func(j *judge) verdict {
		v := regressionPart(j, c, m)
		if v.measured != "not measured" {
			v.measured += baselineSource(j, c)
		}
		return v
	}
}

// recordReads is the target 7 row on record reads: every sub-benchmark of the baseline's
// BenchmarkRecordRead (record= and tail_records= at the start, middle and end of 1,000,000
// records), in ns/op shown as us.
func recordReads(j *judge) verdict {
	m := metric{"ns_per_op", "us", 1e-3, true, "", ""}
	var labels, cases []string
	var parts []verdict
	for _, c := range j.base.cases {
		if sub, ok := strings.CutPrefix(c, recordReadPrefix); ok {
			labels, cases = append(labels, sub), append(cases, c)
			parts = append(parts, regressionPart(j, c, m))
		}
	}
	if len(parts) == 0 {
		return notMeasured("no record-read baseline")
	}
	v := combineAll(labels, parts)
	if v.measured != "not measured" {
		v.measured += baselineSource(j, cases[0])
	}
	return v
}
