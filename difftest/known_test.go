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
// range back, like any deduplicated retry (regression test of KI-6, open).
// Spec: extension §6.3, B-5.2.1-09.
func TestKI6ClosingRetryGetsItsRecordRange(t *testing.T) {
	knownIssue(t, ki6)
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
