package linearizability

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/anishathalye/porcupine"

	"github.com/dsd-project/dsd/model"
)

// The pull-wake lease machine as a porcupine model (base protocol §7.2-§7.3, D10): one
// subscription over one linked stream, operations append / claim / ack / release by
// concurrent workers. Each server answer must be what model.SubMachine, the machine the
// delivery worker performs, allows at the operation's linearization point: one holder at a
// time (ALREADY_CLAIMED names it), generations that grow by one per wake, fencing of every
// stale ack or release, cursors that never move back, claims that see every append that
// completed before them, and next_wake exactly when work remains.

// subLink is the path of the one linked stream inside the model.
const subLink = "s"

// SubOp is one operation of a subscription history.
type SubOp struct {
	Kind   string      // "append", "claim", "ack", "release"
	Worker string      // claim, ack, release: the client's worker name
	Fence  model.Fence // ack, release: what the request presents
	Offset uint64      // ack: the acked position; append: the body length
	Done   bool        // ack
	// NoToken: an ack or release sent without a token (the client never claimed): 401.
	NoToken bool
}

// SubResult is a server answer.
type SubResult struct {
	Status   int
	Code     string // error code of a 4xx
	Gen      uint64 // claim 200
	WakeID   string // claim 200
	Tail     uint64 // append 204: Stream-Next-Offset; claim 200: the stream's tail_offset
	NextWake bool   // ack 200
	Holder   string // ALREADY_CLAIMED: current_holder
}

// SubModel checks histories of SubOp / SubResult. Wakes that the server issues on its own
// (after an append, a done ack or a release with work left) have ids the model learns from
// the claim that takes them.
var SubModel = porcupine.Model{
	Init: func() any {
		return model.SubMachine{Type: model.SubPullWake, LeaseMs: model.MaxLeaseTTLMs,
			Links: []model.SubLink{{Path: subLink, LinkType: model.LinkExplicit}}}
	},
	Step: func(state, input, output any) (bool, any) {
		m, in, out := state.(model.SubMachine), input.(SubOp), output.(SubResult)
		next, ok := subStep(m, in, out)
		return ok, next
	},
	Equal: func(a, b any) bool { return reflect.DeepEqual(a, b) },
	DescribeOperation: func(input, output any) string {
		in, out := input.(SubOp), output.(SubResult)
		return fmt.Sprintf("%s %s gen=%d off=%d -> %d %s gen=%d tail=%d", in.Kind, in.Worker, in.Fence.Gen, in.Offset, out.Status, out.Code, out.Gen, out.Tail)
	},
	DescribeState: func(state any) string {
		m := state.(model.SubMachine)
		s := fmt.Sprintf("gen=%d cursor=%d tail=%d", m.Gen, m.Links[0].Acked, m.Links[0].Tail)
		if w := m.Wake; w != nil {
			s += fmt.Sprintf(" wake=%s/%d holder=%q", w.ID, w.Gen, w.Holder)
		}
		return s
	},
}

// subStep is one transition: the next state and whether out is allowed.
func subStep(m model.SubMachine, in SubOp, out SubResult) (model.SubMachine, bool) {
	switch in.Kind {
	case "append":
		tail := m.Links[0].Tail + model.Offset(in.Offset)
		return m.Append(subLink, tail), out.Status == 204 && model.Offset(out.Tail) == tail
	case "claim":
		return claimStep(m, in, out)
	case "ack", "release":
		if in.NoToken {
			return m, out.Status == 401 && out.Code == "TOKEN_INVALID"
		}
	}
	switch in.Kind {
	case "ack":
		d, err := m.Ack(in.Fence, []model.SubAck{{Path: subLink, Offset: model.Offset(in.Offset)}}, in.Done, 0, "")
		if err != nil {
			return m, out.Status == 409 && out.Code == model.ErrorCode(err)
		}
		return d.Next, out.Status == 200 && out.NextWake == d.NextWake
	case "release":
		d, err := m.Release(in.Fence, 0, "")
		if err != nil {
			return m, out.Status == 409 && out.Code == model.ErrorCode(err)
		}
		return d.Next, out.Status == 204
	}
	return m, false
}

// claimStep allows a claim's answer: 200 only when nobody holds the lease and work is
// pending, with exactly the generation of the wake the machine holds or issues and the
// current tail; 409 as the machine says.
func claimStep(m model.SubMachine, in SubOp, out SubResult) (model.SubMachine, bool) {
	d, err := m.Claim(in.Worker, out.WakeID, 0)
	switch {
	case errors.Is(err, model.ErrSubClaimed):
		return m, out.Status == 409 && out.Code == "ALREADY_CLAIMED" && out.Holder == m.Wake.Holder
	case err != nil:
		return d.Next, out.Status == 409 && out.Code == model.ErrorCode(err)
	}
	n := d.Next
	if out.Status != 200 || out.WakeID == "" || out.Gen != n.Gen || model.Offset(out.Tail) != n.Links[0].Tail {
		return m, false
	}
	w := *n.Wake
	w.ID = out.WakeID // a wake the server issued on its own: the claim names it
	n.Wake = &w
	return n, true
}
