package linearizability

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// batchBody frames the bodies (extension §4.1).
func batchBody(frames []string) []byte {
	var b []byte
	for _, f := range frames {
		b = binary.BigEndian.AppendUint32(b, uint32(len(f)))
		b = append(b, f...)
	}
	return b
}

// AppendBatch implements Client.
func (c EngineClient) AppendBatch(stream string, frames []string) Output {
	payloads := make([][]byte, len(frames))
	for i, f := range frames {
		payloads[i] = []byte(f)
	}
	acks, _, err := c.Store.AppendBatch(c.key(stream), c.contentType(stream), payloads)
	if err != nil {
		return errorOutput(err)
	}
	out := Output{Status: 200, Acks: make([]Ack, len(acks))}
	for i, a := range acks {
		if a.Err != nil {
			o := errorOutput(a.Err)
			if o.Unknown() {
				return o
			}
			out.Acks[i] = Ack{Status: o.Status, Offset: o.Offset, Closed: o.Closed}
		} else {
			out.Acks[i] = Ack{Status: 204, Offset: a.Tail.String(), Closed: a.Closed}
		}
		if isJSONStream(stream) {
			out.Acks[i].RecStart, out.Acks[i].RecNext = u64p(a.RecordStart), u64p(a.RecordNext)
		}
	}
	return out
}

// AppendBatch implements Client: POST {stream}/append-batch.
func (c *HTTPClient) AppendBatch(stream string, frames []string) Output {
	resp, err := c.do(http.MethodPost, c.extURL(stream)+"/append-batch",
		http.Header{"Content-Type": {c.contentType(stream)}}, batchBody(frames))
	out := output(resp, err)
	if out.Unknown() || out.Status != 200 {
		return out
	}
	var acks []struct {
		Status   int     `json:"status"`
		Next     string  `json:"stream_next_offset"`
		Closed   bool    `json:"stream_closed"`
		RecStart *uint64 `json:"stream_record_start"`
		RecNext  *uint64 `json:"stream_record_next"`
	}
	if err := json.Unmarshal(resp.Body, &acks); err != nil {
		return Output{Error: fmt.Sprintf("unreadable acks (%v): %q", err, resp.Body)}
	}
	for _, a := range acks {
		if a.Status >= 500 {
			return Output{Error: fmt.Sprintf("frame status %d", a.Status)}
		}
		out.Acks = append(out.Acks, Ack{Status: a.Status, Offset: a.Next, Closed: a.Closed, RecStart: a.RecStart,
			RecNext: a.RecNext})
	}
	return out
}

// stepBatch applies an append-batch request: each frame as its own append, in order,
// its acknowledgement checked like that append's response (extension §4, §4.4). The
// frames take effect at one point of the linearization, which is how dsd commits them
// (one decision pass, one transaction: CONFORMANCE.md "Append-batch"); a server that
// interleaved other writes between the frames of one request would be reported. A
// batch with an unknown outcome applies every admissible frame; one refused as a whole
// is 404 on a missing stream.
func stepBatch(s State, in Input, out Output) (bool, State) {
	if out.Unknown() {
		for i := range in.Frames {
			_, s = stepAppend(s, in.frame(i), Output{})
		}
		return true, s
	}
	if !s.Exists {
		return out.Status == 404, s
	}
	if out.Status != 200 || len(out.Acks) != len(in.Frames) {
		return false, s
	}
	for i, a := range out.Acks {
		ok, next := stepAppend(s, in.frame(i), a.output())
		if !ok {
			return false, s
		}
		s = next
	}
	return true, s
}

// isJSONStream reports whether the workload made stream a JSON stream (its name says
// so).
func isJSONStream(stream string) bool { return strings.HasSuffix(stream, jsonSuffix) }

// jsonSuffix marks the workload's application/json streams.
const jsonSuffix = "-json"

func (c EngineClient) contentType(stream string) string { return streamContentType(stream) }
func (c *HTTPClient) contentType(stream string) string  { return streamContentType(stream) }

func streamContentType(stream string) string {
	if isJSONStream(stream) {
		return "application/json"
	}
	return ContentType
}
