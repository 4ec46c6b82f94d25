package linearizability

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/dsd-project/dsd/engine"
)

// allRecords is a tail_records count larger than any stream of a run: a record-aware
// read from F (extension §6.6: max(F, N - count)).
const allRecords = 1 << 40

// countMsgs counts the messages of canonical JSON bytes (one "\n" each, D3); 0 on other
// streams.
func countMsgs(stream string, canonical []byte) uint64 {
	if !isJSONStream(stream) {
		return 0
	}
	return uint64(bytes.Count(canonical, []byte("\n")))
}

// RecordRead implements Client with one engine read (the engine serves it from one
// committed view).
func (c EngineClient) RecordRead(stream, which string) Output {
	spec := engine.RecordSpec{Kind: engine.RecordTail, N: allRecords}
	if which == "now" {
		spec = engine.RecordSpec{Kind: engine.RecordNow}
	}
	res, err := c.Store.Read(c.key(stream), engine.ReadRequest{Record: &spec, MaxBytes: 1 << 30})
	if err != nil {
		return errorOutput(err)
	}
	if !res.UpToDate {
		return Output{Error: "record read did not reach the tail"}
	}
	return Output{Status: 200, Offset: res.Next.String(), Closed: res.EOF, Len: uint64(len(res.Data)),
		Digest: DigestOf(res.Data), Msgs: countMsgs(stream, res.Data), RecFirst: u64p(res.Info.RecordFirst),
		RecStart: u64p(res.RecordStart), RecNext: u64p(res.RecordNext)}
}

// RecordRead implements Client: GET ?tail_records= (or ?record=now), then
// ?record=<Stream-Record-Next> until Stream-Up-To-Date. The result carries the first
// response's F and Start and the last one's Next.
func (c *HTTPClient) RecordRead(stream, which string) Output {
	q := "tail_records=" + strconv.FormatUint(allRecords, 10)
	if which == "now" {
		q = "record=now"
	}
	var out Output
	var data []byte
	for i := 0; i < 100000; i++ {
		resp, err := c.do(http.MethodGet, c.streamURL(stream)+"?"+q, nil, nil)
		o := output(resp, err)
		if o.Unknown() || o.Status != 200 {
			if i > 0 && !o.Unknown() {
				return Output{Error: fmt.Sprintf("record read continued with status %d", o.Status)}
			}
			return o
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/x-ndjson" {
			return Output{Status: 200, Error: "record read with Content-Type " + ct}
		}
		if i == 0 {
			out = o
		}
		data = append(data, resp.Body...)
		out.Offset, out.Closed, out.RecNext = o.Offset, o.Closed, o.RecNext
		if resp.Header.Get("Stream-Up-To-Date") != "" {
			break
		}
		if o.RecNext == nil {
			return Output{Error: "record read without Stream-Record-Next"}
		}
		q = "record=" + url.QueryEscape(strconv.FormatUint(*o.RecNext, 10))
	}
	out.Len, out.Digest, out.Msgs = uint64(len(data)), DigestOf(data), countMsgs(stream, data)
	return out
}
