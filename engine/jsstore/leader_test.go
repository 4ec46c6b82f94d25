package jsstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dsd-project/dsd/engine/jsstore/jstest"
	"github.com/dsd-project/dsd/engine/storage"
)

// The JetStream leader of the partition is SIGKILLed while groups commit: commits in
// flight are resolved by resending (or reported unknown and reloaded), a new leader is
// elected, and afterwards every acknowledged append is read back exactly once, in order,
// from a store loaded afresh; again after all three nodes are SIGKILLed and restarted. Spec: design/distributed.md §7 (partition leader dies
// mid-append), §9.
func TestLeaderKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-process cluster and waits out an election (-short)")
	}
	c := jstest.StartProcs(t, 3)
	nc := c.Connect()
	// The nodes are this binary's children, started with sync always; the check itself
	// is TestSyncCheck's.
	o := Options{Partitions: 1, Replicas: 3, Prefix: "LK", UnsafeSkipSyncCheck: true}
	open := func() *Store {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		st, err := Open(ctx, nc, o)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	st := open()
	defer st.Close()
	const streams = 4
	tails := make([]uint64, streams)
	acked := make([][]int, streams)
	for i := 0; i < streams; i++ {
		mustCommit(t, st, createChange(uint64(i+1), fmt.Sprint("s", i)))
	}
	name, err := st.Leader(context.Background(), 0)
	leader := c.Index(name)
	if err != nil || leader < 0 {
		t.Fatalf("leader of the partition stream: %q %v", name, err)
	}
	start := time.Now()
	killedAt, afterKill, unknown := time.Time{}, 0, 0
	for n := 0; afterKill < 50 && time.Since(start) < 45*time.Second; n++ {
		if n == 30 {
			killedAt = time.Now()
			go c.Kill(leader) // lands while groups commit
		}
		group := make([]storage.Change, streams)
		for i := range group {
			group[i] = storage.Change{SID: uint64(i + 1), Messages: []storage.Message{unit(tails[i], strconv.Itoa(n)+";")}}
		}
		errs := st.Commit(group)
		for i, err := range errs {
			switch {
			case err == nil:
				acked[i] = append(acked[i], n)
				tails[i] += uint64(len(strconv.Itoa(n)) + 1)
			case errors.Is(err, storage.ErrUnknown) || errors.Is(err, storage.ErrConflict):
				unknown++
				m, err := st.Stream(fmt.Sprint("bk/s", i))
				if err != nil || m == nil {
					t.Fatalf("reload after %v: %v", errs[i], err)
				}
				tails[i] = m.Tail
			default:
				t.Fatalf("group %d, stream %d: %v", n, i, err)
			}
		}
		if !killedAt.IsZero() && errs[0] == nil {
			afterKill++
		}
	}
	if killedAt.IsZero() || afterKill < 50 {
		t.Fatalf("%d groups acknowledged after the kill in %s", afterKill, time.Since(start))
	}
	stats := st.Stats()
	t.Logf("leader n%d killed; %d groups acknowledged after it, %d changes unknown/reloaded, %+v, %s in all",
		leader+1, afterKill, unknown, stats, time.Since(start).Round(time.Millisecond))
	if stats.Resends == 0 {
		t.Fatal("no publish was resent: the kill did not leave one in doubt")
	}
	c.Restart(leader)
	re := open()
	for i := 0; i < streams; i++ {
		_, got := readAll(t, re, fmt.Sprint("bk/s", i))
		checkAcked(t, i, got, acked[i])
	}
	re.Close()
	// Then every node at once (SIGKILL: what survives is what each fsynced).
	for i := 0; i < 3; i++ {
		c.Kill(i)
	}
	for i := 0; i < 3; i++ {
		c.Restart(i)
	}
	var after *Store
	for deadline := time.Now().Add(40 * time.Second); after == nil; {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		after, err = Open(ctx, nc, o)
		cancel()
		if err != nil && time.Now().After(deadline) {
			t.Fatalf("open after the whole cluster was killed: %v", err)
		}
		if err != nil {
			time.Sleep(200 * time.Millisecond)
		}
	}
	defer after.Close()
	for i := 0; i < streams; i++ {
		_, got := readAll(t, after, fmt.Sprint("bk/s", i))
		checkAcked(t, i, got, acked[i])
	}
}

// checkAcked checks that data holds every acknowledged unit once, units strictly
// increasing (an unacknowledged unit may be there too, once).
func checkAcked(t *testing.T, stream int, data string, acked []int) {
	t.Helper()
	seen := map[int]bool{}
	last := -1
	for _, u := range strings.Split(strings.TrimSuffix(data, ";"), ";") {
		n, err := strconv.Atoi(u)
		if err != nil {
			t.Fatalf("stream %d: bad unit %q", stream, u)
		}
		if n <= last {
			t.Fatalf("stream %d: unit %d after %d (applied twice or out of order)", stream, n, last)
		}
		seen[n], last = true, n
	}
	for _, n := range acked {
		if !seen[n] {
			t.Fatalf("stream %d: acknowledged unit %d lost", stream, n)
		}
	}
}
