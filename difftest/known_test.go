package difftest

import (
	"os"
	"testing"
	"time"

	"github.com/dsd-project/dsd/model"
)

// A bucket whose only stream has expired holds no stream: GET /{bucket} counts 0 and
// DELETE /{bucket} answers 204 (regression test of KI-1, fixed in 5c49ed9).
// Spec: X-1.3-01, X-1.5-01, A-14 (an expired stream answers 404 on every method).
func TestExpiredStreamsLeaveTheBucketEmpty(t *testing.T) {
	h, err := OpenHarness(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	k := model.StreamKey{Bucket: "bkt0", Stream: "s"}
	for _, touch := range []model.Command{nil, model.HeadStream{Stream: k}, model.AppendStream{Stream: k,
		ContentType: model.Str("text/plain"), Body: []byte("x")}} {
		script := Script{
			model.CreateBucket{Bucket: "bkt0"},
			model.CreateStream{Stream: k, TTL: model.Str("1")},
			Tick{D: 2 * time.Second},
		}
		if touch != nil {
			script = append(script, touch)
		}
		script = append(script, model.GetBucket{Bucket: "bkt0"}, model.DeleteBucket{Bucket: "bkt0"})
		if err := h.Check(script, DefaultStart()); err != nil {
			t.Fatal(err)
		}
	}
}

// knownIssue skips a regression test of an open known issue, printing it, unless
// DSD_KNOWN_ISSUES=1.
func knownIssue(t *testing.T, k KnownIssue) {
	t.Helper()
	if os.Getenv("DSD_KNOWN_ISSUES") != "1" {
		t.Skipf("open known issue %s (%s): %s; run with DSD_KNOWN_ISSUES=1", k.ID, k.Req, k.Summary)
	}
}

// The retry of an append-and-close that created records gets that append's record
// range back, like any deduplicated retry (regression test of KI-6, fixed).
// Spec: extension §6.3, B-5.2.1-09.
func TestKI6ClosingRetryGetsItsRecordRange(t *testing.T) {
	h, err := OpenHarness(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	k := model.StreamKey{Bucket: "bkt0", Stream: "s"}
	closing := model.AppendStream{Stream: k, ContentType: model.Str("application/json"), Closed: model.Str("true"),
		ProducerID: model.Str("p"), ProducerEpoch: model.Str("0"), ProducerSeq: model.Str("0"), Body: []byte("[1,2]")}
	script := Script{
		model.CreateBucket{Bucket: "bkt0"},
		model.CreateStream{Stream: k, ContentType: model.Str("application/json"), Body: []byte(`"a"`)},
		closing, // 200, Stream-Record-Start 1, -Next 3
		closing, // 204: the same range again
	}
	if err := h.CheckStrict(script, DefaultStart()); err != nil {
		t.Fatal(err)
	}
}

// A stream that expires while a fork references it is soft-deleted: its next request
// answers 410, and a fork of it 409 (regression test of KI-7, fixed). The fork keeps
// reading the data. Spec, B-4.2-10.
func TestKI7ExpiredForkSourceIsSoftDeleted(t *testing.T) {
	h, err := OpenHarness(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	k := func(s string) model.StreamKey { return model.StreamKey{Bucket: "bkt0", Stream: s} }
	for _, first := range []model.Command{model.HeadStream{Stream: k("s")}, model.ReadStream{Stream: k("s")},
		model.DeleteStream{Stream: k("s")}, model.CreateStream{Stream: k("g"), ForkedFrom: model.Str("/bkt0/s")}} {
		script := Script{
			model.CreateBucket{Bucket: "bkt0"},
			model.CreateStream{Stream: k("s"), TTL: model.Str("1"), Body: []byte("x")},
			model.CreateStream{Stream: k("f"), ForkedFrom: model.Str("/bkt0/s"), TTL: model.Str("100")},
			Tick{D: 2 * time.Second},
			first, // 410 (the fork: 409 FORK_SOURCE_DELETED)
			model.ReadStream{Stream: k("f")},
		}
		if err := h.CheckStrict(script, DefaultStart()); err != nil {
			t.Fatal(err)
		}
	}
}

// A sub-offset counts only what remains of the append unit holding the anchor: on a
// fork, the part of a JSON unit it inherited ends at its fork point, and its own first
// append is another unit (regression test of KI-8, fixed). Spec: A-22, B-4.2-14.
func TestKI8SubOffsetStaysInItsAppendUnit(t *testing.T) {
	h, err := OpenHarness(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	k := func(s string) model.StreamKey { return model.StreamKey{Bucket: "bkt0", Stream: s} }
	js := model.Str("application/json")
	script := Script{
		model.CreateBucket{Bucket: "bkt0"},
		model.CreateStream{Stream: k("s"), ContentType: js, Body: []byte(`["a","b","c","d"]`)}, // one unit
		// f1 inherits "a","b" of that unit (fork point after "b"), then appends its own unit.
		model.CreateStream{Stream: k("f1"), ForkedFrom: model.Str("/bkt0/s"), ForkOffset: model.Str(model.Offset(8).String())},
		model.AppendStream{Stream: k("f1"), ContentType: js, Body: []byte(`["x","y"]`)},
		// After "a", one message ("b") remains of that unit on f1: a sub-offset of 2 is 400.
		model.CreateStream{Stream: k("f2"), ForkedFrom: model.Str("/bkt0/f1"), ForkOffset: model.Str(model.Offset(4).String()),
			ForkSubOffset: model.Str("2")},
		model.CreateStream{Stream: k("f2"), ForkedFrom: model.Str("/bkt0/f1"), ForkOffset: model.Str(model.Offset(4).String()),
			ForkSubOffset: model.Str("1")},
		model.ReadStream{Stream: k("f2")},
	}
	if err := h.CheckStrict(script, DefaultStart()); err != nil {
		t.Fatal(err)
	}
}
