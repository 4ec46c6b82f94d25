package linearizability

import (
	"errors"
	"fmt"

	"github.com/anishathalye/porcupine"

	"github.com/dsd-project/dsd/model"
)

// The pull-wake lease machine as a porcupine model (base protocol §7.2-§7.3, D10): one
// subscription over one linked stream, operations append / claim / ack / release by
// concurrent workers. Each server answer must be what model.WakeMachine allows at the
// operation's linearization point: one holder at a time (ALREADY_CLAIMED names it),
// generations that only grow, fencing of every stale ack or release, cursors that never
// move back, and claims that see every append that completed before them.

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

// SubModel checks histories of SubOp / SubResult.
var SubModel = porcupine.Model{
	Init: func() any { return model.WakeMachine{} },
	Step: func(state, input, output any) (bool, any) {
		m, in, out := state.(model.WakeMachine), input.(SubOp), output.(SubResult)
		next, ok := subStep(m, in, out)
		return ok, next
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(SubOp), output.(SubResult)
		return fmt.Sprintf("%s %s gen=%d off=%d -> %d %s gen=%d tail=%d", in.Kind, in.Worker, in.Fence.Gen, in.Offset, out.Status, out.Code, out.Gen, out.Tail)
	},
}

// subStep is one transition: the next state and whether out is allowed.
func subStep(m model.WakeMachine, in SubOp, out SubResult) (model.WakeMachine, bool) {
	switch in.Kind {
	case "append":
		return m.Append(out.Tail), out.Status == 204 && out.Tail == m.Tail+in.Offset
	case "claim":
		return claimStep(m, in, out)
	case "ack", "release":
		if in.NoToken {
			return m, out.Status == 401 && out.Code == "TOKEN_INVALID"
		}
	}
	switch in.Kind {
	case "ack":
		n, nextWake, err := m.Ack(in.Fence, in.Offset, in.Done, 0, 0)
		if err != nil {
			return m, out.Status == 409 && out.Code == model.ErrorCode(err)
		}
		return n, out.Status == 200 && out.NextWake == nextWake
	case "release":
		n, err := m.Release(in.Fence)
		if err != nil {
			return m, out.Status == 409 && out.Code == model.ErrorCode(err)
		}
		return n, out.Status == 204
	}
	return m, false
}

// claimStep allows a claim's answer: 200 only when nobody holds the lease and work is
// pending, with a generation above every earlier one (a wake the server issued on its
// own in between counts) and the current tail; 409 as the machine says.
func claimStep(m model.WakeMachine, in SubOp, out SubResult) (model.WakeMachine, bool) {
	_, err := m.Claim(in.Worker, out.WakeID, 0, 0)
	switch {
	case errors.Is(err, model.ErrSubClaimed):
		return m, out.Status == 409 && out.Code == "ALREADY_CLAIMED" && out.Holder == m.Holder
	case err != nil:
		return m, out.Status == 409 && out.Code == model.ErrorCode(err)
	case out.Status != 200 || out.Gen <= m.Gen || out.Tail != m.Tail || out.WakeID == "":
		return m, false
	}
	m.Gen, m.Wake, m.Holder = out.Gen, out.WakeID, in.Worker
	return m, true
}
