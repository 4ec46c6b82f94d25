package engine

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/dsd-project/dsd/model"
)

// Appends with framed bodies (AppendRequest.Frame) and producer retries, racing
// evictions of every idle stream (lagging metas flushed first), keep each stream exact:
// every acknowledged append at its offset, each retry deduplicated, the content complete.
func TestEvictRacingFramedProducerAppends(t *testing.T) {
	te := newTestEngine(t)
	const streams, appends = 6, 150
	for i := 0; i < streams; i++ {
		te.mustCreate(fmt.Sprint(i), "text/plain", "")
	}
	te.opts.LoadedStreams = 1
	stop := make(chan struct{})
	var evictor sync.WaitGroup
	evictor.Add(1)
	go func() {
		defer evictor.Done()
		for {
			select {
			case <-stop:
				return
			default:
				te.evictIdle()
			}
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, streams)
	for i := 0; i < streams; i++ {
		wg.Add(1)
		go func(name string) {
			defer wg.Done()
			var want strings.Builder
			for n := 0; n < appends; n++ {
				body := fmt.Sprintf("%s-%d;", name, n)
				frame := append([]byte{0}, body...)
				req := AppendRequest{MediaType: "text/plain", Body: frame[1:], Frame: frame,
					Producer: &model.Producer{ID: "w", Epoch: 0, Seq: uint64(n)}}
				res, err := te.Append(key(name), req)
				if err != nil {
					errs <- err
					return
				}
				want.WriteString(body)
				if int(res.Tail) != want.Len() || res.Outcome != Appended {
					errs <- fmt.Errorf("%s append %d: tail %d outcome %v, want %d appended", name, n, res.Tail, res.Outcome, want.Len())
					return
				}
				if n%7 == 0 { // a retry of the same seq is deduplicated, even after a reload
					res, err = te.Append(key(name), req)
					if err != nil || res.Outcome != Duplicate || int(res.Tail) != want.Len() {
						errs <- fmt.Errorf("%s retry %d: %+v %v", name, n, res, err)
						return
					}
				}
			}
			r, err := te.Read(key(name), ReadRequest{MaxBytes: 1 << 20})
			if err != nil || string(r.Data) != want.String() {
				errs <- fmt.Errorf("%s read %q %v, want %q", name, r.Data, err, want.String())
			}
		}(fmt.Sprint(i))
	}
	wg.Wait()
	close(stop)
	evictor.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if te.Loaded().Unloads == 0 {
		t.Fatal("no stream was unloaded: the race was not exercised")
	}
}
