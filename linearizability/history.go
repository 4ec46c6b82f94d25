package linearizability

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/anishathalye/porcupine"
)

// Op is one recorded operation. Call and Return are nanoseconds since the recording
// started, from a monotonic clock. An operation whose outcome is unknown has
// Output.Status 0 and no Return: it may take effect at any time after its call.
type Op struct {
	Client int    `json:"client"`
	Call   int64  `json:"call"`
	Return int64  `json:"return,omitempty"`
	Input  Input  `json:"input"`
	Output Output `json:"output"`
}

// Final is a stream's content as read at the end of a run, after every writer stopped:
// what live transcripts are checked against.
type Final struct {
	Stream  string `json:"stream"`
	Content []byte `json:"content"`
	Offset  string `json:"offset"`
	Closed  bool   `json:"closed"`
}

// History is everything a run recorded: the operations, the live-read transcripts and
// the final content of each stream. It is stored as JSONL, one record per line, each
// tagged by type ("op", "live", "final").
type History struct {
	Ops    []Op
	Live   []Transcript
	Finals []Final
}

type line struct {
	Type  string      `json:"type"`
	Op    *Op         `json:"op,omitempty"`
	Live  *Transcript `json:"live,omitempty"`
	Final *Final      `json:"final,omitempty"`
}

// WriteJSONL writes h, one record per line.
func (h History) WriteJSONL(w io.Writer) error {
	enc := json.NewEncoder(w)
	for i := range h.Ops {
		if err := enc.Encode(line{Type: "op", Op: &h.Ops[i]}); err != nil {
			return err
		}
	}
	for i := range h.Live {
		if err := enc.Encode(line{Type: "live", Live: &h.Live[i]}); err != nil {
			return err
		}
	}
	for i := range h.Finals {
		if err := enc.Encode(line{Type: "final", Final: &h.Finals[i]}); err != nil {
			return err
		}
	}
	return nil
}

// ReadJSONL reads a history written by WriteJSONL. Blank lines and lines starting with
// "#" (comments in hand-written fixtures) are skipped.
func ReadJSONL(r io.Reader) (History, error) {
	var h History
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for n := 1; sc.Scan(); n++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		var l line
		if err := json.Unmarshal([]byte(text), &l); err != nil {
			return h, fmt.Errorf("line %d: %w", n, err)
		}
		switch {
		case l.Type == "op" && l.Op != nil:
			h.Ops = append(h.Ops, *l.Op)
		case l.Type == "live" && l.Live != nil:
			h.Live = append(h.Live, *l.Live)
		case l.Type == "final" && l.Final != nil:
			h.Finals = append(h.Finals, *l.Final)
		default:
			return h, fmt.Errorf("line %d: unknown record %q", n, l.Type)
		}
	}
	return h, sc.Err()
}

// errAssumption prefixes violations of the recording rules: they make a history
// uncheckable, whatever the server did.
var errAssumption = errors.New("history breaks a recording assumption")

// CheckAssumptions validates what linearization relies on (etcd's
// checkValidationAssumptions): each client's operations are sequential and never
// overlap; an operation with an unknown outcome is its client's last (the recorder
// switches to a fresh client id after one); known outcomes return after they are
// called; reads with unknown outcomes are not recorded; producer ids hold no spaces.
func (h History) CheckAssumptions() error {
	byClient := map[int][]Op{}
	for _, op := range h.Ops {
		byClient[op.Client] = append(byClient[op.Client], op)
		if op.Input.Producer != nil && strings.ContainsAny(op.Input.Producer.ID, " \t\n") {
			return fmt.Errorf("%w: producer id %q holds white space", errAssumption, op.Input.Producer.ID)
		}
		if op.Output.Unknown() && !op.Input.IsWrite() {
			return fmt.Errorf("%w: %s by client %d has an unknown outcome; failed reads are dropped",
				errAssumption, op.Input, op.Client)
		}
		if !op.Output.Unknown() && op.Return < op.Call {
			return fmt.Errorf("%w: client %d: %s returns (%d) before its call (%d)", errAssumption,
				op.Client, op.Input, op.Return, op.Call)
		}
	}
	for c, ops := range byClient {
		sort.Slice(ops, func(i, j int) bool { return ops[i].Call < ops[j].Call })
		for i := 0; i+1 < len(ops); i++ {
			if ops[i].Output.Unknown() {
				return fmt.Errorf("%w: client %d continues after an operation with an unknown outcome",
					errAssumption, c)
			}
			if ops[i+1].Call < ops[i].Return {
				return fmt.Errorf("%w: client %d has overlapping operations (%s and %s)", errAssumption,
					c, ops[i].Input, ops[i+1].Input)
			}
		}
	}
	return nil
}

// porcupineOps converts the history for porcupine: unknown outcomes return at
// math.MaxInt64 (etcd), so they may linearize after everything else ("never
// happened").
func (h History) porcupineOps() []porcupine.Operation {
	out := make([]porcupine.Operation, len(h.Ops))
	for i, op := range h.Ops {
		in := op.Input
		in.prepare()
		ret := op.Return
		if op.Output.Unknown() {
			ret = math.MaxInt64
		}
		out[i] = porcupine.Operation{ClientId: op.Client, Input: in, Call: op.Call, Output: op.Output,
			Return: ret}
	}
	return out
}
