package linearizability

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/httpd"
	"github.com/dsd-project/dsd/model"
)

// A client told that a stream is closed at its final offset finds it closed there on
// its next request: closure is durable and monotonic, and a 409 for a closed stream
// carries the final offset. Regression test of KI-2 (refusals were sent before the
// close they reveal had committed; fixed in 5c49ed9), which the full workload found
// first. Spec: B-4-04, B-5.2-10, D4.
func TestClosedRefusalWaitsForTheClose(t *testing.T) {
	store := httpd.EngineStore{Engine: openEngine(t)}
	var broken atomic.Value
	rounds := 100
	if testing.Short() {
		rounds = 20
	}
	for round := 0; round < rounds && broken.Load() == nil; round++ {
		k := model.StreamKey{Bucket: "default", Stream: "refusal"}
		_ = store.Delete(k)
		if _, err := store.Create(k, engine.CreateRequest{ContentType: ContentType, MediaType: ContentType}); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for c := 0; c < 8; c++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					req := engine.AppendRequest{MediaType: ContentType, Body: []byte("x"), Close: c == 0 && i == 20}
					_, err := store.Append(k, req)
					var ce *model.ClosedError
					if errors.As(err, &ce) {
						info, herr := store.Head(k)
						if herr == nil && (!info.Closed || info.Tail != ce.Final) {
							broken.Store("409 STREAM_CLOSED at " + ce.Final.String() + ", then HEAD: tail " +
								info.Tail.String() + ", closed " + map[bool]string{true: "yes", false: "no"}[info.Closed])
						}
						return
					}
					if err != nil || req.Close {
						return
					}
				}
			}()
		}
		wg.Wait()
	}
	if b := broken.Load(); b != nil {
		t.Fatal(b)
	}
}
