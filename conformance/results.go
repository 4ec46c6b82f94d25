package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sort"

	"github.com/onsi/ginkgo/v2/types"
)

// SpecResult is one spec's outcome in a compact results file: what the matrix needs of
// a run, small enough to commit for a server that CI does not run (the upstream Caddy
// server's column of CONFORMANCE.md).
type SpecResult struct {
	Spec    string `json:"spec"`              // the spec's full text
	State   string `json:"state"`             // Ginkgo's state: passed, failed, skipped, ...
	Failure string `json:"failure,omitempty"` // the failure message's first line
}

// Results is a compact results file: the run's server and the outcome of each spec.
type Results struct {
	Server string       `json:"server"`
	Specs  []SpecResult `json:"specs"`
}

// CompactReport condenses a report into Results for server, specs sorted by name.
func CompactReport(r *types.Report, server string) Results {
	out := Results{Server: server}
	for _, s := range r.SpecReports {
		if s.LeafNodeType != types.NodeTypeIt {
			continue
		}
		res := SpecResult{Spec: s.FullText(), State: s.State.String()}
		if s.State.Is(types.SpecStateFailureStates) {
			res.Failure = firstLine(s.Failure.Message)
		}
		out.Specs = append(out.Specs, res)
	}
	sort.Slice(out.Specs, func(i, j int) bool { return out.Specs[i].Spec < out.Specs[j].Spec })
	return out
}

// WriteResults writes res as JSON to path, one spec per line (diffs stay readable).
func WriteResults(path string, res Results) error {
	server, err := json.Marshal(res.Server)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "{\"server\": %s, \"specs\": [\n", server)
	for i, s := range res.Specs {
		line, err := json.Marshal(s)
		if err != nil {
			return err
		}
		b.Write(line)
		if i < len(res.Specs)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("]}\n")
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// LoadResults reads a results file back as a report the matrix can show.
func LoadResults(path string) (*types.Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var res Results
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r := &types.Report{}
	for _, s := range res.Specs {
		var state types.SpecState
		if err := state.UnmarshalJSON([]byte(fmt.Sprintf("%q", s.State))); err != nil {
			return nil, fmt.Errorf("%s: spec %q: state %q: %w", path, s.Spec, s.State, err)
		}
		r.SpecReports = append(r.SpecReports, types.SpecReport{LeafNodeType: types.NodeTypeIt,
			LeafNodeText: s.Spec, State: state, Failure: types.Failure{Message: s.Failure}})
	}
	return r, nil
}
