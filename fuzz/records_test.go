package fuzz

import (
	"errors"
	"testing"

	"github.com/dsd-project/dsd/difftest"
	"github.com/dsd-project/dsd/model"
)

// FuzzRecordRead: record-aware read parameters (extension §6.6-§6.8) on a JSON stream
// whose retention has moved F past its first records: any combination of record=,
// tail_records=, max_records=, record_view=, max_bytes= and offset= (each present or
// absent, with any value) gets the same answer from the model, the engine and httpd:
// status, error code, F/Start/Next, offsets and the NDJSON or envelope body.
func FuzzRecordRead(f *testing.F) {
	f.Add(uint8(1), "2", "", "", "", "", "")
	f.Add(uint8(2), "", "3", "", "", "", "")
	f.Add(uint8(5), "0", "", "2", "", "", "")
	f.Add(uint8(9), "now", "", "1", "envelope", "", "")
	f.Add(uint8(17), "7", "", "", "", "", "")
	f.Add(uint8(33), "1", "", "", "", "10", "")
	f.Add(uint8(65), "", "", "", "", "", "-1")
	f.Add(uint8(3), "3", "0", "", "", "", "")
	f.Add(uint8(5), "01", "", "0", "", "", "")
	f.Fuzz(func(t *testing.T, present uint8, record, tail, max, view, maxBytes, offset string) {
		opt := func(bit uint8, v string) *string {
			if present&bit == 0 {
				return nil
			}
			return &v
		}
		h := sharedHarness(t)
		k := model.StreamKey{Bucket: "recs", Stream: "j"}
		read := model.ReadStream{Stream: k, Record: opt(1, record), TailRecords: opt(2, tail),
			MaxRecords: opt(4, max), RecordView: opt(8, view), MaxBytes: opt(16, maxBytes), Offset: opt(32, offset)}
		script := difftest.Script{
			model.CreateBucket{Bucket: "recs"},
			model.CreateStream{Stream: k, ContentType: model.Str("application/json"),
				Body: []byte(`[1,"two",{"three":3},[4],null,"six"]`)},
			model.PublishSnapshot{Stream: k, Record: model.Str("2"), Body: []byte("s")},
			model.SetRetention{Stream: k, Record: model.Str("2")},
			read,
		}
		if present&64 != 0 {
			script = append(script, model.AppendStream{Stream: k, Closed: model.Str("true")}, read)
		}
		err := h.Check(script, difftest.DefaultStart())
		var tol *difftest.Tolerated
		if errors.As(err, &tol) {
			t.Skip(tol.Error())
		}
		if err != nil {
			t.Fatal(err)
		}
	})
}
