package jsstore

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/dsd-project/dsd/engine/storage"
)

// Commits on a 3-node in-process cluster (R3, sync always; all nodes share this
// machine's cores and disk): groups of one 100-byte append on each of `streams`
// streams, one group at a time as the engine's committer sends them. appends/s is the
// figure to compare with boltstore's group commit.
func BenchmarkCommit(b *testing.B) {
	for _, streams := range []int{1, 16} {
		b.Run(fmt.Sprintf("streams=%d", streams), func(b *testing.B) {
			c := jstestStart(b)
			nc := c.Connect()
			st := openBench(b, nc, c)
			defer st.Close()
			tails := make([]uint64, streams)
			for i := range tails {
				mustCommit(b, st, createChange(uint64(i+1), fmt.Sprint("s", i)))
			}
			val := bytes.Repeat([]byte("x"), 100)
			b.ResetTimer()
			for n := 0; n < b.N; n++ {
				group := make([]storage.Change, streams)
				for i := range group {
					group[i] = storage.Change{SID: uint64(i + 1), Messages: []storage.Message{unit(tails[i], string(val))}}
					tails[i] += 100
				}
				mustCommit(b, st, group...)
			}
			b.ReportMetric(float64(b.N*streams)/b.Elapsed().Seconds(), "appends/s")
		})
	}
}

// Opening (taking over) a partition of 500 streams with 10 frames each and a checkpoint
// every 4 frames: what a new owner waits before it serves the partition.
func BenchmarkOpenPartition(b *testing.B) {
	c := jstestStart(b)
	nc := c.Connect()
	e := &env{c: c, nc: nc}
	o := e.opts()
	o.Partitions, o.CheckpointFrames = 1, 4
	st := e.open(b, o)
	const streams = 500
	group := make([]storage.Change, streams)
	for i := range group {
		group[i] = createChange(uint64(i+1), fmt.Sprint("s", i))
	}
	mustCommit(b, st, group...)
	for f := 0; f < 10; f++ {
		for i := range group {
			group[i] = storage.Change{SID: uint64(i + 1), Messages: []storage.Message{unit(uint64(f*10), "0123456789")}}
		}
		mustCommit(b, st, group...)
	}
	st.Close()
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		e.open(b, o).Close()
	}
	b.ReportMetric(float64(b.N*streams)/b.Elapsed().Seconds(), "streams/s")
}
