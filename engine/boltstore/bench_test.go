package boltstore

import (
	"fmt"
	"syscall"
	"testing"

	"github.com/dsd-project/dsd/engine/storage"
)

// BenchmarkCommitGroup: one commit group as the engine builds it under 50 writers (22
// appends of 100 B, the measured mean group size), spread over 1 or 100 streams, without
// fsync. Besides ns/op (per group) it reports what bbolt writes per group: write(2) calls
// (pwrite-calls/group) and page allocations (pages/group), the layout's cost that an
// fsync then pays for (issue 19), and the process's CPU time per group (cpu-ns/group,
// robust under load). The checkpoints that apply the logged groups to the data file run
// in the background and count in all of these; the one after the last group is timed
// too, so they are the whole cost per group.
func BenchmarkCommitGroup(b *testing.B) {
	const perGroup = 22
	for _, streams := range []int{1, 100} {
		b.Run(fmt.Sprintf("streams=%d", streams), func(b *testing.B) {
			st, err := Open(b.TempDir(), Options{NoSync: true})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			val := make([]byte, 101)
			tails := make([]uint64, streams)
			group := make([]storage.Change, perGroup)
			msgs := make([]storage.Message, perGroup)
			n := 0
			commit := func() {
				for i := range group {
					s := n % streams
					n++
					msgs[i] = storage.Message{Off: tails[s], Val: val}
					tails[s] += 100
					group[i] = storage.Change{SID: uint64(s + 1), Messages: msgs[i : i+1]}
				}
				for _, err := range st.Commit(group) {
					if err != nil {
						b.Fatal(err)
					}
				}
			}
			for range 2000 { // a file of some depth: 44,000 messages
				commit()
			}
			if err := st.checkpoint(nil); err != nil {
				b.Fatal(err)
			}
			s0 := st.db.Stats().TxStats
			cpu0 := processCPU()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				commit()
			}
			if err := st.checkpoint(nil); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/group")
			d := st.db.Stats().TxStats
			d = d.Sub(&s0)
			b.ReportMetric(float64(d.GetWrite())/float64(b.N), "pwrite-calls/group")
			b.ReportMetric(float64(d.GetPageCount())/float64(b.N), "pages/group")
		})
	}
}

// processCPU returns the process's user and system CPU time so far, in nanoseconds.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
