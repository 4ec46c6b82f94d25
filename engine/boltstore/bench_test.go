package boltstore

import (
	"fmt"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/dsd-project/dsd/engine/storage"
	"github.com/dsd-project/dsd/internal/proccpu"
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
			d := measureCommits(b, st, commit, 0, 1, "group")
			b.ReportMetric(float64(d.GetWrite())/float64(b.N), "pwrite-calls/group")
		})
	}
}

// BenchmarkCheckpointSpread: what a logged append costs in the log and at its checkpoint
// when appends go to 100 streams or spread over 100,000 of a file of 200,000 (issue 19,
// target 6), without fsync: groups of 22 appends of 100 B, with their stream's meta when
// meta is set (what the engine adds once its stored meta is older than the refresh
// interval), a checkpoint every perCk groups (90: 2,000 appends, the default 200 ms at
// 10,000 appends/s). cpu-ns/append is the process's CPU time per append, pages/append
// what bbolt allocated.
func BenchmarkCheckpointSpread(b *testing.B) {
	const perGroup, stored = 22, 200000
	for _, meta := range []bool{false, true} {
		for _, streams := range []int{100, 100000} {
			for _, perCk := range []int{90, 450} {
				b.Run(fmt.Sprintf("meta=%v/streams=%d/groups-per-checkpoint=%d", meta, streams, perCk), func(b *testing.B) {
					benchSpread(b, stored, streams, perGroup, perCk, meta)
				})
			}
		}
	}
}

func benchSpread(b *testing.B, stored, streams, perGroup, perCk int, meta bool) {
	st, err := Open(b.TempDir(), Options{NoSync: true, CheckpointInterval: -1, CheckpointBytes: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	metas := make([]*storage.Meta, stored)
	for lo := 0; lo < stored; lo += 10000 {
		err := st.db.Update(func(tx *bolt.Tx) error {
			for i := lo; i < lo+10000; i++ {
				metas[i] = &storage.Meta{ID: uint64(i + 1), Bucket: "many", Stream: fmt.Sprintf("many-%d", i),
					ContentType: "text/plain", MediaType: "text/plain", CreatedMs: 1796179500363, LastWriteMs: 1796179500363,
					AccessMs: 1796179500363, Tail: 2}
				if err := tx.Bucket(bktMeta).Put(sidKey(uint64(i+1)), encodeMeta(metas[i])); err != nil {
					return err
				}
				if err := tx.Bucket(bktData).Put(posKey(uint64(i+1), 0), []byte("\x00x\n")); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	val := make([]byte, 101)
	group := make([]storage.Change, perGroup)
	n := 0
	commit := func() {
		for i := range group {
			// spread: consecutive appends go to streams far apart, as 50 writers started
			// at evenly spaced streams do
			s := (n%50)*(streams/50) + (n/50)%(streams/50)
			n++
			m := *metas[s]
			msgs := []storage.Message{{Off: m.Tail, Val: val}}
			m.Tail += 100
			m.LastWriteMs++
			metas[s] = &m
			group[i] = storage.Change{SID: m.ID, Messages: msgs}
			if meta {
				group[i].Meta = &m
			}
		}
		for _, err := range st.Commit(group) {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	measureCommits(b, st, commit, perCk, perGroup, "append")
}

// measureCommits is the measured loop of the commit benchmarks: commit b.N times, with a
// checkpoint after every perCk-th (none when perCk is 0) and one after the last, all timed.
// It reports the process's CPU time (cpu-ns/<unit>) and bbolt's page allocations
// (pages/<unit>) per unit, perCommit units a commit, and returns bbolt's transaction
// statistics over the loop.
func measureCommits(b *testing.B, st *Store, commit func(), perCk, perCommit int, unit string) bolt.TxStats {
	s0 := st.db.Stats().TxStats
	cpu0 := proccpu.Nanos()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		commit()
		if perCk > 0 && (i+1)%perCk == 0 {
			if err := st.checkpoint(nil); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := st.checkpoint(nil); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	units := float64(b.N * perCommit)
	b.ReportMetric(float64(proccpu.Nanos()-cpu0)/units, "cpu-ns/"+unit)
	d := st.db.Stats().TxStats
	d = d.Sub(&s0)
	b.ReportMetric(float64(d.GetPageCount())/units, "pages/"+unit)
	return d
}
