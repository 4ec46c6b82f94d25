package main

import (
	"slices"
	"strings"
)

// The verdicts of the targets table (targets.go): what a row measured and whether the target
// is met, missed, or could not be judged (a figure missing, or a run in another shape than the
// target is stated for).

// shapeMiss says how a's runs differ from the shape want (RESULT keys compared as written:
// subscribers=1000): got lists the differing keys as run, stated the whole shape; got is ""
// when every run has the shape.
func shapeMiss(a *serverAgg, want []KV) (got, stated string) {
	if a == nil {
		return "", ""
	}
	var gots, states []string
	for _, kv := range want {
		states = append(states, kv.Key+"="+kv.Val)
		for _, r := range a.runs {
			if r[kv.Key] != kv.Val {
				gots = append(gots, kv.Key+"="+r[kv.Key])
				break
			}
		}
	}
	return strings.Join(gots, " "), strings.Join(states, " ")
}

// withShape makes a row unmeasured when dsd ran case c in another shape than the target's
// (a short run with fewer subscribers): its figures are shown, but they do not judge it.
func withShape(c string, want []KV, f func(*judge) verdict) func(*judge) verdict {
	return func(j *judge) verdict {
		v := f(j)
		if got, stated := shapeMiss(j.agg(c, kindDSD), want); got != "" && v.state != stateUnmeasured {
			v.state, v.why = stateUnmeasured, "run with "+got+"; the target is stated for "+stated
		}
		return v
	}
}

// judge is what the rows read: this run's results, the baseline's (target 7) and the CPU
// model of this run's machine (a baseline taken on another one is flagged).
type judge struct {
	res, base *results
	cpu       string
}

// agg returns kind's aggregate for a case of this run (nil when it did not run).
func (j *judge) agg(c, kind string) *serverAgg { return j.res.byCase[c][kind] }

// verdictState is how a row came out.
type verdictState int

const (
	stateReference  verdictState = iota // a figure other rows are judged against
	stateMet                            // the target is met
	stateMissed                         // measured, and the target is not met
	stateUnmeasured                     // a figure the judgement needs is missing
)

// verdict is a row's outcome: the figures (with the server CPU per operation beside each
// throughput) and, when missed or unmeasured, why: each figure against its target, or what
// is missing.
type verdict struct {
	measured string
	state    verdictState
	why      string
}

// judged is a verdict on a measured figure.
func judged(ok bool, measured, why string) verdict {
	if ok {
		return verdict{measured: measured, state: stateMet}
	}
	return verdict{measured: measured, state: stateMissed, why: why}
}

// notMeasured is the verdict of a row whose figure is missing.
func notMeasured(why string) verdict {
	return verdict{measured: "not measured", state: stateUnmeasured, why: why}
}

// metCell renders the Met column: yes, or **no** with the figure and the target.
func (v verdict) metCell() string {
	switch v.state {
	case stateMet:
		return "yes"
	case stateMissed:
		return "**no**: " + v.why
	case stateUnmeasured:
		return "**no**: not measured (" + v.why + ")"
	}
	return "-"
}

// combine joins labelled parts of one row (two generators, several sub-benchmarks): missed
// when any part is, met when the others are met or missing, unmeasured when all are missing.
func combine(labels []string, parts []verdict) verdict {
	var measured, missed, missing []string
	state := stateUnmeasured
	for i, p := range parts {
		measured = append(measured, labels[i]+": "+p.measured)
		switch p.state {
		case stateMissed:
			missed = append(missed, labels[i]+" "+p.why)
			state = stateMissed
		case stateUnmeasured:
			missing = append(missing, labels[i]+": "+p.why)
		case stateMet, stateReference:
			if state == stateUnmeasured {
				state = p.state
			}
		}
	}
	v := verdict{measured: strings.Join(measured, "; "), state: state}
	switch state {
	case stateMissed:
		v.why = strings.Join(missed, "; ")
	case stateUnmeasured:
		v.measured, v.why = "not measured", strings.Join(missing, "; ")
		if same := parts[0].why; !slices.ContainsFunc(parts, func(p verdict) bool { return p.why != same }) {
			v.why = same
		}
	}
	return v
}

// combineAll is combine for parts that are each a condition of the target: a missing part
// leaves the row unmeasured unless another is missed.
func combineAll(labels []string, parts []verdict) verdict {
	v := combine(labels, parts)
	if v.state != stateMet {
		return v
	}
	var missing []string
	for i, p := range parts {
		if p.state == stateUnmeasured {
			missing = append(missing, labels[i]+": "+p.why)
		}
	}
	if len(missing) > 0 {
		v.state, v.why = stateUnmeasured, strings.Join(missing, "; ")
	}
	return v
}
