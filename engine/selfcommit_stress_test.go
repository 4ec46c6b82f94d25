package engine

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dsd-project/dsd/model"
)

// Many producers append, each retrying a failed seq until it is acknowledged, while the
// store fails and recovers under them (groups committed by requests' own goroutines and
// by the committer goroutine, recoveries draining the queue with groups busy). Every
// acknowledged append, a deduplicated retry included, must be in its stream exactly once
// and in seq order; the only error allowed is ErrStorageFailed; nothing may hang.
func TestSelfCommitUnderFailuresKeepsEveryAck(t *testing.T) {
	te := newTestEngine(t)
	const streams, producers = 4, 16
	for i := range streams {
		te.mustCreate(fmt.Sprintf("s%d", i), "text/plain", "")
	}
	var stop atomic.Bool
	go func() { // the producers append until it is done
		for range 3 {
			time.Sleep(20 * time.Millisecond)
			te.setFault(errors.New("injected"))
			time.Sleep(5 * time.Millisecond)
			te.setFault(nil)
			for te.failed.Load() != nil {
				time.Sleep(10 * time.Millisecond)
			}
		}
		time.Sleep(20 * time.Millisecond)
		stop.Store(true)
	}()
	var acked [producers]uint64
	var wg sync.WaitGroup
	errs := make(chan error, producers)
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k := key(fmt.Sprintf("s%d", p%streams))
			for seq := uint64(0); !stop.Load(); {
				_, err := te.Append(k, AppendRequest{MediaType: "text/plain",
					Body:     []byte(fmt.Sprintf("%d.%d,", p, seq)),
					Producer: &model.Producer{ID: fmt.Sprintf("p%d", p), Seq: seq}})
				switch {
				case err == nil:
					seq++
					acked[p] = seq
				case errors.Is(err, model.ErrStorageFailed):
					time.Sleep(time.Millisecond) // retry the same seq
				default:
					errs <- fmt.Errorf("producer %d seq %d: %w", p, seq, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i := range streams {
		next := map[string]int{}
		for _, m := range strings.Split(strings.TrimSuffix(string(te.readAll(fmt.Sprintf("s%d", i)).Data), ","), ",") {
			var p, seq int
			if _, err := fmt.Sscanf(m, "%d.%d", &p, &seq); err != nil {
				t.Fatalf("stream s%d: message %q", i, m)
			}
			if id := fmt.Sprint(p); seq != next[id] {
				t.Fatalf("stream s%d: producer %d's seq %d where %d was due", i, p, seq, next[id])
			}
			next[fmt.Sprint(p)]++
		}
		for p := i; p < producers; p += streams {
			if got := next[fmt.Sprint(p)]; uint64(got) != acked[p] {
				t.Errorf("stream s%d: producer %d has %d of its %d acknowledged appends", i, p, got, acked[p])
			}
		}
	}
}

// Close while many appends commit their own groups: every append returns (acknowledged
// or ErrShuttingDown), Close returns, and every acknowledged append survives a reopen.
func TestSelfCommitCloseUnderLoad(t *testing.T) {
	te := newTestEngine(t)
	const producers = 16
	te.mustCreate("s", "text/plain", "")
	var wg sync.WaitGroup
	var acked atomic.Int64
	started := make(chan struct{}, producers)
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := 0; ; seq++ {
				_, err := te.Append(key("s"), AppendRequest{MediaType: "text/plain", Body: []byte(fmt.Sprintf("%d.%d,", p, seq))})
				if errors.Is(err, model.ErrShuttingDown) {
					return
				}
				if err != nil {
					t.Errorf("producer %d: %v", p, err)
					return
				}
				acked.Add(1)
				if seq == 10 {
					started <- struct{}{}
				}
			}
		}()
	}
	for range producers {
		<-started
	}
	if err := te.Engine.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	te.open()
	got := strings.Count(string(te.readAll("s").Data), ",")
	if int64(got) != acked.Load() {
		t.Fatalf("%d messages after reopen; %d were acknowledged", got, acked.Load())
	}
}
