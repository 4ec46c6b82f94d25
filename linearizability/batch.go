package linearizability

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// batchBody frames the inputs' bodies (extension §4.1).
func batchBody(frames []Input) []byte {
	var b []byte
	for _, in := range frames {
		b = binary.BigEndian.AppendUint32(b, uint32(len(in.Body)))
		b = append(b, in.Body...)
	}
	return b
}

// each returns n copies of out: the outcome of a batch that failed as a whole.
func each(n int, out Output) []Output {
	outs := make([]Output, n)
	for i := range outs {
		outs[i] = out
	}
	return outs
}

// AppendBatch implements Client: one frame per input, acknowledged per frame.
func (c EngineClient) AppendBatch(stream string, frames []Input) []Output {
	payloads := make([][]byte, len(frames))
	for i, in := range frames {
		payloads[i] = []byte(in.Body)
	}
	acks, _, err := c.Store.AppendBatch(c.key(stream), c.contentType(stream), payloads)
	if err != nil {
		return each(len(frames), errorOutput(err))
	}
	if len(acks) != len(frames) {
		return each(len(frames), Output{Error: fmt.Sprintf("%d acks for %d frames", len(acks), len(frames))})
	}
	outs := make([]Output, len(frames))
	for i, a := range acks {
		if a.Err != nil {
			outs[i] = errorOutput(a.Err)
			continue
		}
		outs[i] = Output{Status: 204, Offset: a.Tail.String(), Closed: a.Closed}
	}
	return outs
}

// AppendBatch implements Client: POST {stream}/append-batch; a 200 is read ack by ack,
// any other status applies to every frame.
func (c *HTTPClient) AppendBatch(stream string, frames []Input) []Output {
	resp, err := c.do(http.MethodPost, c.streamURL(stream)+"/append-batch",
		http.Header{"Content-Type": {c.contentType(stream)}}, batchBody(frames))
	out := output(resp, err)
	if out.Unknown() || out.Status != 200 {
		return each(len(frames), out)
	}
	var acks []struct {
		Status int    `json:"status"`
		Next   string `json:"stream_next_offset"`
		Closed bool   `json:"stream_closed"`
	}
	if err := json.Unmarshal(resp.Body, &acks); err != nil || len(acks) != len(frames) {
		return each(len(frames), Output{Error: fmt.Sprintf("unreadable acks (%v): %q", err, resp.Body)})
	}
	outs := make([]Output, len(frames))
	for i, a := range acks {
		outs[i] = Output{Status: a.Status, Offset: a.Next, Closed: a.Closed}
		if a.Status >= 500 {
			outs[i] = Output{Error: fmt.Sprintf("frame status %d", a.Status)}
		}
	}
	return outs
}

// isJSONStream reports whether the workload made stream a JSON stream (its name says
// so: extension streams of the record workload end in "-json").
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
