package linearizability

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// Errors of the checking stages (each failure is wrapped with one of them).
var (
	errNotLinearizable = errors.New("not linearizable: no order of the operations explains every response (porcupine: Illegal)")
	errCheckTimeout    = errors.New("linearizability check timed out (porcupine: Unknown); an Unknown result counts as a failure")
	errFinalMismatch   = errors.New("the final content read at the end does not match the linearized history")
)

// Result is the outcome of checking a history.
type Result struct {
	// Linearizable is porcupine's verdict ("" when the assumptions failed first).
	Linearizable porcupine.CheckResult
	// Errors lists every violation found, prefixed by the stage that found it. Empty
	// means the history passed every check.
	Errors []error
	// Ops, Streams and Unknown count the operations, partitions and unknown outcomes.
	Ops, Streams, Unknown int
	// Duration is how long the check took.
	Duration time.Duration

	info porcupine.LinearizationInfo
}

// OK reports whether the history passed every check.
func (r Result) OK() bool { return len(r.Errors) == 0 }

// Err joins the violations into one error (nil when OK).
func (r Result) Err() error { return errors.Join(r.Errors...) }

// Summary is a one-line tally.
func (r Result) Summary() string {
	verdict := "PASS"
	if !r.OK() {
		verdict = fmt.Sprintf("FAIL (%d violations)", len(r.Errors))
	}
	return fmt.Sprintf("%s: %d operations on %d streams (%d unknown outcomes), porcupine %s, checked in %s",
		verdict, r.Ops, r.Streams, r.Unknown, r.Linearizable, r.Duration.Round(time.Millisecond))
}

// CheckOptions tune Check.
type CheckOptions struct {
	// Timeout bounds porcupine (default 60 s). Running out is a failure.
	Timeout time.Duration
}

// Check validates a history as a pipeline (etcd's habit): recording assumptions first;
// then linearizability of the operations (porcupine, partitioned by stream); then, on a
// linearizable history, the offsets post-pass over the linearization and the live
// transcripts, the final contents against the linearized end states, and each live
// transcript's guarantees.
func Check(h History, opts CheckOptions) Result {
	start := time.Now()
	if opts.Timeout == 0 {
		opts.Timeout = 60 * time.Second
	}
	r := Result{Ops: len(h.Ops)}
	streams := map[string]bool{}
	for _, op := range h.Ops {
		streams[op.Input.Stream] = true
		if op.Output.Unknown() {
			r.Unknown++
		}
	}
	r.Streams = len(streams)
	defer func() { r.Duration = time.Since(start) }()
	stage := func(name string, errs ...error) {
		for _, err := range errs {
			r.Errors = append(r.Errors, fmt.Errorf("%s: %w", name, err))
		}
	}
	if err := h.CheckAssumptions(); err != nil {
		stage("assumptions", err)
		r.Duration = time.Since(start)
		return r
	}
	ops := h.porcupineOps()
	res, info := porcupine.CheckOperationsVerbose(Model, ops, opts.Timeout)
	r.Linearizable, r.info = res, info
	switch res {
	case porcupine.Illegal:
		stage("linearizability", errNotLinearizable)
		stage("linearizability", explainIllegal(ops, info)...)
	case porcupine.Unknown:
		stage("linearizability", errCheckTimeout)
	}
	if res == porcupine.Ok {
		lin := longestLinearizations(info)
		ends := endStates(lin, h.Finals)
		obs := append(linearizedTokens(lin), transcriptTokens(h.Live)...)
		obs = append(obs, finalTokens(h.Finals, ends)...)
		stage("offsets", checkOffsets(obs)...)
		stage("finals", checkFinals(ends, h.Finals)...)
	}
	finals := map[string]Final{}
	for _, f := range h.Finals {
		finals[f.Stream] = f
	}
	for _, t := range h.Live {
		f, ok := finals[t.Stream]
		if !ok {
			stage("live", fmt.Errorf("%s reader of %s: no final content recorded (the final read did not answer 200), so the transcript cannot be checked", t.Mode, t.Stream))
			continue
		}
		stage("live", CheckTranscript(t, f)...)
	}
	r.Duration = time.Since(start)
	return r
}

// longestLinearizations returns, per partition, the longest (on success: complete)
// linearization porcupine found.
func longestLinearizations(info porcupine.LinearizationInfo) [][]porcupine.Operation {
	var out [][]porcupine.Operation
	for _, sets := range info.PartialLinearizationsOperations() {
		var best []porcupine.Operation
		for _, l := range sets {
			if len(l) > len(best) {
				best = l
			}
		}
		out = append(out, best)
	}
	return out
}

// finalTokens places each final read's offset: the read started at the retention
// boundary of the stream's end state.
func finalTokens(fs []Final, ends map[string]State) []tokenAt {
	var out []tokenAt
	for _, f := range fs {
		out = append(out, tokenAt{stream: f.Stream, pos: ends[f.Stream].RetLen + uint64(len(f.Content)),
			token: f.Offset, source: "final read"})
	}
	return out
}

// endStates replays each partition's linearization to its end state. Unknown-outcome
// writes that porcupine placed after the partition's last known operation may as well
// never have taken effect (a 503 whose write was lost with its node): when the stream has
// a final read, the end state is the first of the subsets of those trailing writes, all
// of them first, that explains it (else all of them, and checkFinals reports it).
func endStates(lin [][]porcupine.Operation, finals []Final) map[string]State {
	byStream := map[string]Final{}
	for _, f := range finals {
		byStream[f.Stream] = f
	}
	end := map[string]State{}
	for _, ops := range lin {
		if len(ops) == 0 {
			continue
		}
		k := len(ops)
		for k > 0 && ops[k-1].Output.(Output).Unknown() {
			k--
		}
		s := replay(State{}, ops[:k])
		stream := ops[0].Input.(Input).Stream
		f, ok := byStream[stream]
		end[stream] = trailingEnd(s, ops[k:], f, ok)
	}
	return end
}

// maxTrailing bounds the trailing unknown-outcome writes whose subsets endStates tries.
const maxTrailing = 10

// trailingEnd is s after the subset of the trailing unknown-outcome ops (kept in order)
// that explains the final read f, all of them first; all of them when none does.
func trailingEnd(s State, trailing []porcupine.Operation, f Final, hasFinal bool) State {
	all := replay(s, trailing)
	if !hasFinal || len(trailing) == 0 || len(trailing) > maxTrailing {
		return all
	}
	for mask := (1 << len(trailing)) - 1; mask >= 0; mask-- {
		c := s
		for i, op := range trailing {
			if mask&(1<<i) != 0 {
				_, c = Step(c, op.Input.(Input), op.Output.(Output))
			}
		}
		if explains(c, f) {
			return c
		}
	}
	return all
}

// replay applies ops to s in order.
func replay(s State, ops []porcupine.Operation) State {
	for _, op := range ops {
		_, s = Step(s, op.Input.(Input), op.Output.(Output))
	}
	return s
}

// explains reports whether the final read f is what state s holds past its retention
// boundary.
func explains(s State, f Final) bool {
	n, d := s.retained()
	return n == uint64(len(f.Content)) && d == DigestOf(f.Content) && s.Closed == f.Closed
}

// checkFinals compares each final content (a read from -1: what follows the retention
// boundary) with its stream's linearized end state.
func checkFinals(end map[string]State, finals []Final) []error {
	var errs []error
	for _, f := range finals {
		s, ok := end[f.Stream]
		if !ok {
			continue
		}
		if !explains(s, f) {
			errs = append(errs, fmt.Errorf("stream %s: %w: final read has %d bytes (closed %t), the history ends with %s",
				f.Stream, errFinalMismatch, len(f.Content), f.Closed, s))
		}
	}
	return errs
}

// describeErrors renders violations one per line.
func describeErrors(errs []error) string {
	var b strings.Builder
	for _, err := range errs {
		fmt.Fprintf(&b, "  - %v\n", err)
	}
	return b.String()
}

// CheckRun checks a recorded run: Check on its history plus the resumability
// violations found while the server was up.
func CheckRun(run Run, opts CheckOptions) Result {
	r := Check(run.History, opts)
	for _, err := range run.Errors {
		r.Errors = append(r.Errors, fmt.Errorf("live: %w", err))
	}
	return r
}

// explainIllegal describes, for each partition that could not be fully linearized, the
// state after the longest partial linearization and the operations that could come next
// but that the model refuses from that state.
func explainIllegal(ops []porcupine.Operation, info porcupine.LinearizationInfo) []error {
	byStream := map[string][]porcupine.Operation{}
	for _, op := range ops {
		k := op.Input.(Input).Stream
		byStream[k] = append(byStream[k], op)
	}
	var errs []error
	for _, lin := range longestLinearizations(info) {
		if len(lin) == 0 {
			continue
		}
		stream := lin[0].Input.(Input).Stream
		all := byStream[stream]
		if len(lin) == len(all) {
			continue
		}
		s := State{}
		done := map[[2]int64]int{}
		for _, op := range lin {
			_, s = Step(s, op.Input.(Input), op.Output.(Output))
			done[[2]int64{int64(op.ClientId), op.Call}]++
		}
		var rest []porcupine.Operation
		minRet := int64(1<<63 - 1)
		for _, op := range all {
			k := [2]int64{int64(op.ClientId), op.Call}
			if done[k] > 0 {
				done[k]--
				continue
			}
			rest = append(rest, op)
			minRet = min(minRet, op.Return)
		}
		var lines []string
		for _, op := range rest {
			if op.Call <= minRet {
				lines = append(lines, fmt.Sprintf("client %d: %s → %s", op.ClientId, op.Input.(Input), op.Output.(Output)))
			}
		}
		errs = append(errs, fmt.Errorf("stream %s: %d of %d operations linearize; from state {%s} none of these can come next:\n      %s",
			stream, len(lin), len(all), s, strings.Join(lines, "\n      ")))
	}
	return errs
}
