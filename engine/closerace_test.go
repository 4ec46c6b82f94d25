package engine

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// An append acknowledged while Close runs has its last write time stored: Close writes
// the lagging metas (flushMetas), and an append that passed its writability check before
// Close began but queues after the flush of its stream must write its meta itself.
func TestCloseRacingAppendsKeepLastWrite(t *testing.T) {
	fileOnly(t)
	dir := t.TempDir()
	var ms atomic.Int64
	ms.Store(1_800_000_000_000)
	clock := func() time.Time { return time.UnixMilli(ms.Add(1)) }
	opts := Options{NoSync: true, Clock: clock, SweepInterval: time.Hour}
	const streams, writers = 64, 32
	for round := 0; round < 10; round++ {
		e, err := Open(dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		if round == 0 {
			if _, err := e.CreateBucket("test"); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < streams; i++ {
				if _, err := e.Create(key(fmt.Sprint(i)), CreateRequest{ContentType: "text/plain", MediaType: "text/plain"}); err != nil {
					t.Fatal(err)
				}
			}
		}
		var floor [streams]atomic.Int64 // a lower bound of each stream's last acknowledged write time
		var wg sync.WaitGroup
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for n := w; ; n += writers {
					i := n % streams
					before := ms.Load()
					if _, err := e.Append(key(fmt.Sprint(i)), AppendRequest{MediaType: "text/plain", Body: []byte("x")}); err != nil {
						return
					}
					for cur := floor[i].Load(); cur < before && !floor[i].CompareAndSwap(cur, before); cur = floor[i].Load() {
					}
				}
			}(w)
		}
		for ms.Load() < 1_800_000_000_000+int64(round+1)*2000 {
			time.Sleep(time.Millisecond)
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		e, err = Open(dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < streams; i++ {
			sm, err := e.st.Stream(key(fmt.Sprint(i)).String())
			if err != nil || sm == nil {
				t.Fatalf("stored meta of %d: %v %v", i, sm, err)
			}
			if f := floor[i].Load(); sm.LastWriteMs <= f {
				t.Fatalf("round %d: stream %d stored last write %d, an acknowledged append at >%d", round, i, sm.LastWriteMs, f)
			}
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
