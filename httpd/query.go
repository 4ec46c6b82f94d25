package httpd

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/model"
)

// liveMode is the live query parameter (B-5.7, B-5.8).
type liveMode uint8

const (
	liveNone liveMode = iota
	liveLongPoll
	liveSSE
)

// readQuery is a parsed stream GET query (A-15, extension §6.6). Unknown parameters are
// ignored (B-3-02).
type readQuery struct {
	from      model.OffsetSpec
	hasOffset bool
	offsetRaw string // as given, for the ETag; "-1" when omitted
	live      liveMode
	cursor    string
	timeout   time.Duration // timeout_ms (D6); 0 = server default
	rec       *recordQuery  // record-aware read (extension §6.6); nil for offset reads
	bounds    bool          // reads report message ends (binary SSE: one event per message)
}

// parkedQuery is what a parked SSE subscriber keeps of its readQuery (issue 19: the rest
// served the catch-up); bounds follows from its encoding (sseSub.query).
type parkedQuery struct {
	cursor string
	rec    *recordQuery
}

// parked returns what an SSE response keeps of q once caught up; the cursor is copied
// off the request line.
func (q readQuery) parked() parkedQuery {
	return parkedQuery{cursor: strings.Clone(q.cursor), rec: q.rec}
}

// recordQuery is the record-aware part of a read (extension §6.6-§6.8).
type recordQuery struct {
	start      engine.RecordSpec
	startRaw   string // for the ETag
	maxRecords int    // 0 = no limit
	envelope   bool   // record_view=envelope
}

// parseReadQuery parses offset, live, cursor, timeout_ms and the record parameters.
// Errors: ErrBadOffset (malformed or repeated offset), ErrBadLive, ErrLiveNeedsOffset,
// ErrBadQuery, ErrBadRecord.
func parseReadQuery(r *http.Request) (readQuery, error) {
	v := r.URL.Query()
	q := readQuery{offsetRaw: "-1"}
	if offs, ok := v["offset"]; ok {
		if len(offs) != 1 {
			return q, model.ErrBadOffset
		}
		spec, err := model.ParseOffsetSpec(offs[0])
		if err != nil {
			return q, err
		}
		q.from, q.hasOffset, q.offsetRaw = spec, true, offs[0]
	}
	rec, err := parseRecordQuery(v, q.hasOffset)
	if err != nil {
		return q, err
	}
	q.rec = rec
	if l, ok := v["live"]; ok {
		switch l[0] {
		case "long-poll":
			q.live = liveLongPoll
		case "sse":
			q.live = liveSSE
		default:
			return q, model.ErrBadLive
		}
		if !q.hasOffset && q.rec == nil {
			return q, model.ErrLiveNeedsOffset
		}
	}
	if c, ok := v["cursor"]; ok {
		q.cursor = c[0]
	}
	if t, ok := v["timeout_ms"]; ok {
		n, err := strconv.ParseInt(t[0], 10, 64)
		if err != nil {
			return q, model.ErrTimeoutMs
		}
		q.timeout = time.Duration(min(max(n, 1), 60000)) * time.Millisecond
	}
	return q, nil
}

// parseRecordQuery reads record, tail_records, max_records, record_view and refuses
// max_bytes with them (extension §6.6, §6.8). nil: not a record-aware read.
func parseRecordQuery(v map[string][]string, hasOffset bool) (*recordQuery, error) {
	rec, hasRec := v["record"]
	tail, hasTail := v["tail_records"]
	maxr, hasMax := v["max_records"]
	view, hasView := v["record_view"]
	_, hasMaxBytes := v["max_bytes"]
	if !hasRec && !hasTail {
		if hasMax || hasView {
			return nil, model.ErrRecordAlone
		}
		return nil, nil
	}
	if (hasRec && hasTail) || hasOffset || hasMaxBytes || len(rec) > 1 || len(tail) > 1 {
		return nil, model.ErrRecordExclusive
	}
	q := &recordQuery{}
	switch {
	case hasRec && rec[0] == "now":
		q.start, q.startRaw = engine.RecordSpec{Kind: engine.RecordNow}, "now"
	case hasRec:
		n, err := parseUint(rec[0])
		if err != nil {
			return nil, model.ErrRecordValue
		}
		q.start, q.startRaw = engine.RecordSpec{Kind: engine.RecordAt, N: n}, rec[0]
	default:
		n, err := parseUint(tail[0])
		if err != nil {
			return nil, model.ErrTailRecordsValue
		}
		q.start, q.startRaw = engine.RecordSpec{Kind: engine.RecordTail, N: n}, "t"+tail[0]
		if n == 0 {
			q.start.Kind = engine.RecordNow
		}
	}
	if hasMax {
		n, err := parseUint(maxr[0])
		if err != nil || n == 0 || n > model.MaxRecordsLimit {
			return nil, model.ErrMaxRecordsValue
		}
		q.maxRecords = int(n)
	}
	if hasView {
		if view[0] != "envelope" {
			return nil, model.ErrRecordViewValue
		}
		q.envelope = true
	}
	return q, nil
}

// sseReadBytes is the size target of one SSE read (whole messages, at least one): what a
// subscriber's write holds while its socket is full (issue 20). Catch-up and long-poll
// responses keep the ReadChunkBytes of A-16.
const sseReadBytes = 64 << 10

// firstRequest is the engine read that starts a response.
func (q readQuery) firstRequest() engine.ReadRequest {
	if q.rec != nil {
		s := q.rec.start
		return engine.ReadRequest{Record: &s, MaxMessages: q.rec.maxRecords, MaxBytes: q.maxBytes()}
	}
	return engine.ReadRequest{From: q.from, MaxBytes: q.maxBytes(), Bounds: q.bounds}
}

// maxBytes is the read size target: sseReadBytes for SSE, else the engine's (0).
func (q readQuery) maxBytes() int {
	if q.live == liveSSE {
		return sseReadBytes
	}
	return 0
}

// nextRequest continues a live read after res.
func (q readQuery) nextRequest(res engine.ReadResult) engine.ReadRequest {
	if q.rec != nil {
		return engine.ReadRequest{Record: &engine.RecordSpec{Kind: engine.RecordContinue,
			N: res.RecordNext, Offset: res.Next}, MaxMessages: q.rec.maxRecords, MaxBytes: q.maxBytes()}
	}
	return engine.ReadRequest{From: at(res.Next), MaxBytes: q.maxBytes(), Bounds: q.bounds}
}

// isNow reports a read that starts at the tail (no history: no-store, no ETag).
func (q readQuery) isNow() bool {
	if q.rec != nil {
		return q.rec.start.Kind == engine.RecordNow
	}
	return q.from.Kind == model.SpecNow
}

// etagStart is the start as the request gave it, for the ETag; for -1 and
// tail_records it adds the position the start resolved to, which retention moves (the same
// request then answers other bytes, extension §2.2, §6.6).
func (q readQuery) etagStart(res engine.ReadResult) string {
	switch {
	case q.rec == nil && q.from.Kind == model.SpecStart:
		return "-1@" + strconv.FormatUint(uint64(res.Start), 10)
	case q.rec != nil && q.rec.start.Kind == engine.RecordTail:
		return q.etagStartRaw() + "@" + strconv.FormatUint(uint64(res.Start), 10)
	}
	return q.etagStartRaw()
}

func (q readQuery) etagStartRaw() string {
	if q.rec != nil {
		s := "r" + q.rec.startRaw
		if q.rec.envelope {
			s += "e"
		}
		if q.rec.maxRecords > 0 {
			s += "m" + strconv.Itoa(q.rec.maxRecords)
		}
		return s
	}
	return q.offsetRaw
}
