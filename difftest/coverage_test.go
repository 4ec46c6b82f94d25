package difftest

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/dsd-project/dsd/model"
)

// The generator reaches the outcomes that matter: within 300 scripts every status and
// error code below shows up, so a differential run that passes has compared them.
func TestGeneratorCoverage(t *testing.T) {
	seen := map[string]int{}
	cfg := model.Config{ReadChunkBytes: ReadChunkBytes}
	for i := 0; i < 300; i++ {
		start := DefaultStart()
		script := Generate(NewRandSource(uint64(i)), GenConfig{Steps: 60, Model: cfg, Start: start})
		s, now := model.NewState(cfg), start
		for _, c := range script {
			if tk, ok := c.(Tick); ok {
				now = now.Add(tk.D)
				continue
			}
			var res model.Result
			before := s
			s, res = s.Apply(c, now)
			forkCoverage(seen, c, res, before, s, now)
			if r, ok := c.(model.SetRetention); ok && res.Status == 204 && r.Record != nil {
				seen["RETAIN 204 by record"]++
			}
			if a, ok := c.(model.AppendStream); ok && res.Status == 204 && res.Producer != nil && a.ProducerSeq != nil &&
				res.RecordStart != nil && *res.RecordStart != *res.RecordNext && *a.ProducerSeq != u(res.Producer.Seq) {
				seen["POST 204 duplicate of an older seq with records"]++
			}
			if r, ok := c.(model.ReadStream); ok && res.Status == 200 && r.Offset != nil && heldRead(before, r, now) {
				seen["GET 200 from a held position"]++
			}
			if r, ok := c.(model.ReadStream); ok && res.Status == 410 && (r.Offset == nil || *r.Offset == "-1") {
				seen["GET 410 from -1 after retention"]++
			}
			if a, ok := c.(model.AppendStream); ok && a.Body == nil && a.ProducerID != nil && res.Status == 409 {
				seen["POST 409 close-only with a foreign tuple"]++
			}
			if r, ok := c.(model.SetRetention); ok && res.Status == 204 {
				v0, _ := before.Stream(r.Stream, now)
				if v1, _ := s.Stream(r.Stream, now); v1.Retained > v0.Retained {
					seen["RETAIN advanced"]++
				}
			}
			key := fmt.Sprintf("%s %d %s", Kind(c), res.Status, model.ErrorCode(res.Err))
			if res.Closed {
				key += " closed"
			}
			seen[key]++
			for _, a := range res.Acks {
				seen[fmt.Sprintf("ACK %d %s", a.Status, model.ErrorCode(a.Err))]++
			}
		}
	}
	want := []string{
		"POST 200 ", "POST 200  closed", "POST 204 ", "POST 204  closed", "POST 400 EMPTY_BODY",
		"POST 400 EMPTY_JSON_ARRAY", "POST 400 INVALID_JSON", "POST 400 INVALID_PRODUCER",
		"POST 400 INVALID_PRODUCER_SEQ", "POST 400 INVALID_STREAM_SEQ", "POST 400 MISSING_CONTENT_TYPE",
		"POST 400 INVALID_CONTENT_TYPE", "POST 403 STALE_EPOCH", "POST 404 STREAM_NOT_FOUND",
		"POST 409 CONTENT_TYPE_MISMATCH", "POST 409 PRODUCER_SEQ_GAP", "POST 409 SEQ_CONFLICT",
		"POST 409 STREAM_CLOSED", "POST 409 close-only with a foreign tuple", "GET 410 from -1 after retention", "GET 200 from a held position", "PUT 200 ", "PUT 201 ", "PUT 201  closed", "PUT 409 CONFIG_MISMATCH",
		"PUT 400 INVALID_TTL", "PUT 400 INVALID_EXPIRES_AT", "PUT 400 TTL_AND_EXPIRES_AT",
		"PUT 400 INVALID_JSON", "PUT 404 BUCKET_NOT_FOUND", "GET 200  closed", "GET 400 INVALID_OFFSET",
		"GET 400 OFFSET_BEYOND_TAIL", "GET 400 OFFSET_NOT_ALIGNED", "HEAD 200  closed",
		"DELETE 204 ", "DELETE 409 BUCKET_NOT_EMPTY",
		// Attributes (extension §5).
		"PUT 400 INVALID_ATTRS", "GET-ATTRS 200 ", "GET-ATTRS 404 STREAM_NOT_FOUND", "PUT-ATTRS 204 ",
		"PUT-ATTRS 400 INVALID_ATTRS", "PUT-ATTRS 400 MISSING_CONTENT_TYPE", "PUT-ATTRS 404 STREAM_NOT_FOUND",
		// Append-batch (extension §4).
		"BATCH 200 ", "BATCH 400 INVALID_BATCH", "BATCH 400 MISSING_CONTENT_TYPE", "BATCH 413 PAYLOAD_TOO_LARGE",
		"BATCH 404 STREAM_NOT_FOUND", "ACK 204 ", "ACK 409 STREAM_CLOSED", "ACK 409 CONTENT_TYPE_MISMATCH",
		"ACK 400 INVALID_JSON", "ACK 400 EMPTY_JSON_ARRAY",
		// Snapshots, retention, bootstrap (extension §2, §3).
		"PUT-SNAP 204 ", "PUT-SNAP 400 OFFSET_NOT_ALIGNED", "PUT-SNAP 409 SNAPSHOT_BEYOND_TAIL",
		"PUT-SNAP 409 SNAPSHOT_CONFLICT", "PUT-SNAP 409 SNAPSHOT_MATCH_FAILED", "PUT-SNAP 410 OFFSET_GONE",
		"PUT-SNAP 400 INVALID_OFFSET", "GET-SNAP 200 ", "GET-SNAP 307 ", "GET-SNAP 404 SNAPSHOT_NOT_FOUND",
		"DEL-SNAP 404 SNAPSHOT_NOT_FOUND", "DEL-SNAP 409 SNAPSHOT_IN_USE",
		"RETAIN 204 ", "RETAIN 400 OFFSET_NOT_ALIGNED", "RETAIN 409 RETENTION_CONFLICT", "GET 410 OFFSET_GONE",
		"BOOTSTRAP 200 ", "BOOTSTRAP 200  closed", "BOOTSTRAP 400 INVALID_LIVE_MODE",
		"RETAIN advanced",
		// Record coordinates (extension §6).
		"GET-REC 200 ", "GET-REC 200  closed", "GET-REC 400 INVALID_RECORD_PARAMS", "GET-REC 400 RECORD_BEYOND_TAIL",
		"GET-REC 410 RECORD_GONE", "POST 412 RECORD_MISMATCH", "POST 400 INVALID_RECORD_PARAMS",
		"PUT-SNAP 400 RECORD_BEYOND_TAIL", "RETAIN 400 RECORD_BEYOND_TAIL", "RETAIN 204 by record",
		"POST 204 duplicate of an older seq with records",
		// Forks (B-4.2).
		"FORK 201 ", "FORK 201 sub-offset", "FORK 201 JSON", "FORK 200 ", "FORK 409 CONFIG_MISMATCH",
		"FORK 404 FORK_SOURCE_NOT_FOUND", "FORK 409 FORK_SOURCE_DELETED", "FORK 400 INVALID_FORK",
		"FORK 400 OFFSET_BEYOND_TAIL", "FORK 400 OFFSET_NOT_ALIGNED", "FORK 409 CONTENT_TYPE_MISMATCH",
		"FORK 410 OFFSET_GONE", "PUT 409 STREAM_SOFT_DELETED", "GET 410 STREAM_GONE", "HEAD 410 STREAM_GONE",
		"POST 410 STREAM_GONE", "DELETE 410 STREAM_GONE", "DELETE 204 soft", "DELETE 204 cascade",
	}
	for _, k := range want {
		if seen[k] == 0 {
			t.Errorf("no generated step gave %q", k)
		}
	}
	if t.Failed() || testing.Verbose() {
		for _, k := range slices.Sorted(maps.Keys(seen)) {
			t.Logf("%6d %s", seen[k], k)
		}
	}
}

// forkCoverage tallies fork outcomes (B-4.2) under "FORK ..." and the kinds of deletes.
func forkCoverage(seen map[string]int, c model.Command, res model.Result, before, after model.State, now time.Time) {
	switch c := c.(type) {
	case model.CreateStream:
		if c.ForkedFrom == nil {
			return
		}
		key := fmt.Sprintf("FORK %d %s", res.Status, model.ErrorCode(res.Err))
		seen[key]++
		if res.Status == 201 && c.ForkSubOffset != nil && *c.ForkSubOffset != "0" {
			seen["FORK 201 sub-offset"]++
		}
		if res.Status == 201 && res.Extensions {
			seen["FORK 201 JSON"]++
		}
	case model.DeleteStream:
		if res.Status != 204 {
			return
		}
		if len(after.Streams()) == len(before.Streams()) {
			seen["DELETE 204 soft"]++
		} else if len(after.Streams()) < len(before.Streams())-1 {
			seen["DELETE 204 cascade"]++
		}
	}
}

// heldRead reports a read that starts inside a message (at a held position, D9).
func heldRead(s model.State, r model.ReadStream, now time.Time) bool {
	v, ok := s.Stream(r.Stream, now)
	o, err := model.ParseOffset(*r.Offset)
	return ok && err == nil && !slices.Contains(v.Boundaries, o)
}
