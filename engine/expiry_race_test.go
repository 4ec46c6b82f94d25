package engine

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dsd-project/dsd/model"
)

// Streams with a sliding TTL that are read or appended to in every 200 ms of the clock
// never expire while unloads, reloads and expiry passes (loaded, indexed) run
// concurrently with those reads: no access time is lost to an unload. Spec: A-14.
func TestSlidingTTLSurvivesConcurrentUnloadsAndSweeps(t *testing.T) {
	te := newTestEngine(t)
	const streams, rounds = 4, 150
	for i := range streams {
		te.createTTL(fmt.Sprint("t", i), 1)
	}
	te.expireStored() // builds the index
	var clock atomic.Int64
	clock.Store(te.clk.now().UnixMilli())
	te.Engine.now = func() time.Time { return time.UnixMilli(clock.Load()) }
	stop := inBackground(func() {
		te.evictAll()
		te.expireLoaded()
		te.expireIndexed()
	})
	for r := range rounds {
		var users sync.WaitGroup
		for i := range streams {
			users.Go(func() {
				k := key(fmt.Sprint("t", i))
				var err error
				if (r+i)%3 == 0 {
					_, err = te.Append(k, AppendRequest{MediaType: "text/plain", Body: []byte("x")})
				} else {
					_, err = te.Read(k, ReadRequest{From: model.OffsetSpec{Kind: model.SpecStart}, MaxBytes: 1 << 20})
				}
				if err != nil {
					t.Errorf("%s round %d at %d: %v", k, r, clock.Load(), err)
				}
			})
		}
		users.Wait()
		clock.Add(200)
	}
	stop()
	clock.Add(1001)
	te.expireLoaded()
	te.expireIndexed()
	for i := range streams {
		if _, err := te.Head(key(fmt.Sprint("t", i))); !errors.Is(err, model.ErrStreamNotFound) {
			t.Fatalf("t%d after its TTL: %v", i, err)
		}
	}
}
