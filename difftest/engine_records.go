package difftest

import (
	"strconv"
	"strings"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/model"
)

// recordQuery is a record-aware read as httpd parses it (extension §6.6-§6.8).
type recordQuery struct {
	req      engine.ReadRequest
	envelope bool
}

// recordRequest parses the record parameters of a read as httpd does; nil when there are
// none.
func recordRequest(c model.ReadStream) (*recordQuery, error) {
	if c.Record == nil && c.TailRecords == nil {
		if c.MaxRecords != nil || c.RecordView != nil {
			return nil, model.ErrBadRecord
		}
		return nil, nil
	}
	if (c.Record != nil && c.TailRecords != nil) || c.Offset != nil || c.MaxBytes != nil {
		return nil, model.ErrBadRecord
	}
	var spec engine.RecordSpec
	switch {
	case c.Record != nil && *c.Record == "now":
		spec.Kind = engine.RecordNow
	case c.Record != nil:
		n, ok := model.ParseRecordOrdinal(*c.Record)
		if !ok {
			return nil, model.ErrBadRecord
		}
		spec = engine.RecordSpec{Kind: engine.RecordAt, N: n}
	default:
		n, ok := model.ParseRecordOrdinal(*c.TailRecords)
		if !ok {
			return nil, model.ErrBadRecord
		}
		spec = engine.RecordSpec{Kind: engine.RecordTail, N: n}
		if n == 0 {
			spec.Kind = engine.RecordNow
		}
	}
	q := &recordQuery{req: engine.ReadRequest{Record: &spec}}
	if c.MaxRecords != nil {
		n, ok := model.ParseRecordOrdinal(*c.MaxRecords)
		if !ok || n == 0 || n > model.MaxRecordsLimit {
			return nil, model.ErrBadRecord
		}
		q.req.MaxMessages = int(n)
	}
	if c.RecordView != nil {
		if *c.RecordView != "envelope" {
			return nil, model.ErrBadRecord
		}
		q.envelope = true
	}
	return q, nil
}

// render writes a record-aware response: NDJSON or envelopes, and the record headers.
func (q *recordQuery) render(o *Observation, res engine.ReadResult) {
	o.Header[hContentType] = "application/x-ndjson"
	recordBounds(o.Header, res.Info)
	o.Header[hRecStart], o.Header[hRecNext] = u(res.RecordStart), u(res.RecordNext)
	if !q.envelope {
		return
	}
	o.Header[hContentType] = "application/vnd.durable-stream-records+ndjson"
	var b strings.Builder
	r := res.RecordStart
	for _, line := range strings.SplitAfter(string(res.Data), "\n") {
		if line == "" {
			continue
		}
		b.WriteString(`{"record":` + strconv.FormatUint(r, 10) + `,"value":` + strings.TrimSuffix(line, "\n") + "}\n")
		r++
	}
	o.Body = b.String()
}
