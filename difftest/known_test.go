package difftest

import (
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
