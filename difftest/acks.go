package difftest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/model"
)

// AckObs is one append-batch acknowledgement as observed (extension §4.3, §6.11).
type AckObs struct {
	Status int    // 0: not known (the engine returns errors, not statuses)
	Code   string // error_code
	Msg    bool   // error (a human-readable message) is present
	Next   string // stream_next_offset
	Closed bool   // stream_closed
	// Record range (JSON streams): stream_record_start, stream_record_next; "" absent.
	RecStart, RecNext string
}

func (a AckObs) String() string {
	s := fmt.Sprintf("{%d", a.Status)
	if a.Code != "" {
		s += " " + a.Code
	}
	if a.Msg {
		s += " msg"
	}
	s += " next=" + a.Next
	if a.Closed {
		s += " closed"
	}
	if a.RecStart != "" || a.RecNext != "" {
		s += " records=" + a.RecStart + ".." + a.RecNext
	}
	return s + "}"
}

func ackFromModel(a model.FrameAck) AckObs {
	o := AckObs{Status: a.Status, Code: model.ErrorCode(a.Err), Msg: a.Err != nil,
		Next: a.NextOffset.String(), Closed: a.Closed}
	if a.RecordStart != nil {
		o.RecStart, o.RecNext = u(*a.RecordStart), u(*a.RecordNext)
	}
	return o
}

func ackFromEngine(a engine.FrameAck, isJSON bool) AckObs {
	o := AckObs{Status: 204, Next: a.Tail.String(), Closed: a.Closed}
	if isJSON {
		o.RecStart, o.RecNext = u(a.RecordStart), u(a.RecordNext)
	}
	if a.Err != nil {
		o.Status, o.Code, o.Msg = 0, model.ErrorCode(a.Err), true
		if o.Code == "" {
			o.Code = "INTERNAL: " + a.Err.Error()
		}
	}
	return o
}

// wireAck is an acknowledgement as httpd renders it (extension §4.3, D5).
type wireAck struct {
	Status int     `json:"status"`
	Next   *string `json:"stream_next_offset"`
	Closed *bool   `json:"stream_closed"`
	Code   string  `json:"error_code"`
	Error  string  `json:"error"`
	// Record ranges of JSON streams (extension §6.11).
	RecStart *uint64 `json:"stream_record_start"`
	RecNext  *uint64 `json:"stream_record_next"`
}

// acksFromHTTP parses a 200 append-batch body. stream_next_offset must be a string
// token (D2), stream_closed, when present, true.
func acksFromHTTP(body []byte) ([]AckObs, error) {
	var wire []wireAck
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&wire); err != nil {
		return nil, err
	}
	out := make([]AckObs, len(wire))
	for i, w := range wire {
		a := AckObs{Status: w.Status, Code: w.Code, Msg: w.Error != ""}
		if w.Next != nil {
			a.Next = *w.Next
		}
		if w.Closed != nil {
			if !*w.Closed {
				return nil, fmt.Errorf("ack %d: stream_closed is false (present only when true)", i)
			}
			a.Closed = true
		}
		if w.RecStart != nil {
			a.RecStart = u(*w.RecStart)
		}
		if w.RecNext != nil {
			a.RecNext = u(*w.RecNext)
		}
		out[i] = a
	}
	return out, nil
}

// diffAcks compares acknowledgements one by one; a zero Status is not compared.
func diffAcks(want, got []AckObs) []string {
	if len(want) != len(got) {
		return []string{fmt.Sprintf("%d acks %v, want %d %v", len(got), got, len(want), want)}
	}
	var out []string
	for i := range want {
		w, g := want[i], got[i]
		if w.Status == 0 || g.Status == 0 {
			w.Status, g.Status = 0, 0
		}
		if w != g {
			out = append(out, fmt.Sprintf("ack %d %s, want %s", i, g, w))
		}
	}
	return out
}
