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
// Close began but queues after the flush of its stream must write its meta itself
// (metaRefresh's closing). The hooks force that interleaving: the append waits after its
// check until Close's flush of the stream is committed (held before its publication, so
// Close waits for it with the queue open), then queues.
func TestCloseRacingAppendsKeepLastWrite(t *testing.T) {
	te := newTestEngine(t)
	te.mustCreate("c", "text/plain", "")
	te.clk.advance(time.Second)
	te.mustAppend("c", "text/plain", "a") // its stored meta now lags: Close flushes it
	te.clk.advance(time.Second)
	late := te.clk.now().UnixMilli()
	checked, proceed := make(chan struct{}), make(chan struct{})
	hook := func() { close(checked); <-proceed }
	te.appendHook.Store(&hook)
	appended := make(chan error, 1)
	go func() {
		_, err := te.Append(key("c"), AppendRequest{MediaType: "text/plain", Body: []byte("b")})
		appended <- err
	}()
	<-checked
	te.appendHook.Store(nil)
	held, release := holdPublication(te)
	closed := make(chan error, 1)
	go func() { closed <- te.Engine.Close() }()
	<-held // flushMetas has passed every stream and waits for the flush of c
	close(proceed)
	for deadline := time.Now().Add(10 * time.Second); te.queuedOps() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the append did not queue")
		}
	}
	release()
	if err := <-appended; err != nil {
		t.Fatalf("the append racing Close: %v (the interleaving was not forced)", err)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	te.open()
	if sm, err := te.st.Stream(key("c").String()); err != nil || sm == nil || sm.LastWriteMs != late {
		t.Fatalf("stored meta %+v (%v): want the last write time %d of the acknowledged append", sm, err, late)
	}
}

// queuedOps returns how many ops are queued and not yet taken by a committer.
func (te *testEngine) queuedOps() int {
	te.q.mu.Lock()
	defer te.q.mu.Unlock()
	return len(te.q.ops)
}

// The same with many writers over many streams racing Close, on the data file: whatever
// the interleaving, no acknowledged append's last write time is lost.
func TestCloseRacingManyAppendsKeepLastWrite(t *testing.T) {
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
