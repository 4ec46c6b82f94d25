package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dsd-project/dsd/engine/jsstore"
	"github.com/dsd-project/dsd/internal/proccpu"
	"github.com/dsd-project/dsd/model"
)

// Benchmarks of the hot paths (issue 9). Durable ones sync like production; the others
// use NoSync to measure CPU cost. Run with `make bench`; with DSD_TEST_BACKEND=jetstream
// the engine runs on engine/jsstore (3 in-process nodes, R3, sync always, noSync
// ignored).

func benchEngine(b *testing.B, noSync bool) *Engine {
	b.Helper()
	var e *Engine
	var err error
	if onJetStream() {
		var st *jsstore.Store
		if st, err = openJetStream(b.TempDir()); err == nil {
			e, err = OpenBackend(st, Options{SweepInterval: time.Hour})
		}
	} else {
		e, err = Open(b.TempDir(), Options{NoSync: noSync, SweepInterval: time.Hour})
	}
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	if _, err := e.CreateBucket("bench"); err != nil {
		b.Fatal(err)
	}
	return e
}

func bkey(i int) model.StreamKey {
	return model.StreamKey{Bucket: "bench", Stream: fmt.Sprintf("s%d", i)}
}

func benchCreate(b *testing.B, e *Engine, i int, ct string) {
	mt, _ := model.MediaType(ct)
	if _, err := e.Create(bkey(i), CreateRequest{ContentType: ct, MediaType: mt}); err != nil {
		b.Fatal(err)
	}
}

// reopenBench closes e and reopens its data file (cold tail caches: reads hit storage).
func reopenBench(b *testing.B, e *Engine) *Engine {
	dir := filepath.Dir(e.Path())
	e.Close()
	e2, err := Open(dir, Options{NoSync: true, SweepInterval: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e2.Close() })
	return e2
}

// BenchmarkAppendDurable: 100-byte appends from 50 goroutines over 100 streams, fsync on.
func BenchmarkAppendDurable(b *testing.B) { benchAppendParallel(b, false) }

// BenchmarkAppendNoSync is BenchmarkAppendDurable without fsync: the engine's CPU and
// allocations per append (issue 19).
func BenchmarkAppendNoSync(b *testing.B) { benchAppendParallel(b, true) }

// benchAppendParallel runs 50 writers of 100-byte appends over 1 and 100 streams.
func benchAppendParallel(b *testing.B, noSync bool) {
	for _, streams := range []int{1, 100} {
		b.Run(fmt.Sprintf("streams=%d", streams), func(b *testing.B) {
			e := benchEngine(b, noSync)
			for i := 0; i < streams; i++ {
				benchCreate(b, e, i, "text/plain")
			}
			body := []byte(strings.Repeat("x", 100))
			keys := make([]model.StreamKey, streams) // made here: the loop measures the engine only
			for i := range keys {
				keys[i] = bkey(i)
			}
			var n atomic.Int64
			b.SetParallelism(25) // 2 cores x 25 = 50 writers
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := int(n.Add(1)) % streams
					if _, err := e.Append(keys[i], AppendRequest{MediaType: "text/plain", Body: body}); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// BenchmarkAppendBatchDurable: batches of 100 frames of 100 bytes (report records/s).
func BenchmarkAppendBatchDurable(b *testing.B) {
	e := benchEngine(b, false)
	benchCreate(b, e, 0, "text/plain")
	frames := make([][]byte, 100)
	for i := range frames {
		frames[i] = []byte(strings.Repeat("x", 100))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := e.AppendBatch(bkey(0), "text/plain", frames); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(frames))/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkTailRead: the read a live reader does after a wake-up (served from the tail
// cache).
func BenchmarkTailRead(b *testing.B) {
	e := benchEngine(b, true)
	benchCreate(b, e, 0, "text/plain")
	var tail model.Offset
	for i := 0; i < 1000; i++ {
		r, _ := e.Append(bkey(0), AppendRequest{MediaType: "text/plain", Body: []byte("0123456789")})
		tail = r.Tail
	}
	from := model.OffsetSpec{Kind: model.SpecAt, At: tail - 10}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := e.Read(bkey(0), ReadRequest{From: from}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFanout: 1,000 waiting readers woken per append, each reading the new message.
func BenchmarkFanout(b *testing.B) {
	e := benchEngine(b, true)
	benchCreate(b, e, 0, "text/plain")
	const readers = 1000
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got atomic.Int64
	for i := 0; i < readers; i++ {
		r, _, err := e.OpenReader(bkey(0))
		if err != nil {
			b.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer r.Close()
			var next model.Offset
			for {
				if _, err := r.Wait(ctx, next); err != nil {
					return
				}
				res, err := r.Read(ReadRequest{From: model.OffsetSpec{Kind: model.SpecAt, At: next}})
				if err != nil {
					return
				}
				next = res.Next
				got.Add(1)
			}
		}()
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := e.Append(bkey(0), AppendRequest{MediaType: "text/plain", Body: []byte("event")}); err != nil {
			b.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for got.Load() < int64(b.N) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	b.StopTimer()
	cancel()
	wg.Wait()
	b.ReportMetric(float64(got.Load())/float64(b.N), "deliveries/append")
}

// BenchmarkRecordRead: record= and tail_records= reads at the start, middle and end of a
// 1,000,000-record stream: one index lookup each, so all should cost about the same.
func BenchmarkRecordRead(b *testing.B) {
	e := benchEngine(b, true)
	benchCreate(b, e, 0, "application/json")
	const total, batch = 1_000_000, 1000
	var body strings.Builder
	body.WriteByte('[')
	for i := 0; i < batch; i++ {
		if i > 0 {
			body.WriteByte(',')
		}
		fmt.Fprintf(&body, `{"i":%d}`, i)
	}
	body.WriteByte(']')
	for i := 0; i < total/batch; i++ {
		if _, err := e.Append(bkey(0), AppendRequest{MediaType: "application/json", Body: []byte(body.String())}); err != nil {
			b.Fatal(err)
		}
	}
	e2 := reopenBench(b, e)
	cases := []struct {
		name string
		rs   RecordSpec
	}{
		{"record=start", RecordSpec{Kind: RecordAt, N: 0}},
		{"record=middle", RecordSpec{Kind: RecordAt, N: total / 2}},
		{"record=end", RecordSpec{Kind: RecordAt, N: total - 10}},
		{"tail_records=10", RecordSpec{Kind: RecordTail, N: 10}},
		{"tail_records=500000", RecordSpec{Kind: RecordTail, N: total / 2}},
		{"tail_records=all", RecordSpec{Kind: RecordTail, N: total}},
	}
	runtime.GC() // the setup's garbage must not be collected during the first case
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				rs := c.rs
				if _, err := e2.Read(bkey(0), ReadRequest{Record: &rs, MaxMessages: 10}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkForkChainRead: catch-up of a whole stream of 1 MiB (1,000 x 1 KiB) read
// through a chain of 10 forks, against the same bytes in a plain stream.
func BenchmarkForkChainRead(b *testing.B) {
	e := benchEngine(b, true)
	msg := []byte(strings.Repeat("f", 1024))
	benchCreate(b, e, 0, "application/octet-stream")
	for i := 0; i < 100; i++ {
		e.Append(bkey(0), AppendRequest{MediaType: "application/octet-stream", Body: msg})
	}
	for d := 1; d <= 10; d++ {
		src := bkey(d - 1)
		if _, err := e.Create(bkey(d), CreateRequest{Fork: &ForkRequest{Source: src, SourcePath: "/bench/" + src.Stream}}); err != nil {
			b.Fatal(err)
		}
		for i := 0; i < 90; i++ {
			e.Append(bkey(d), AppendRequest{MediaType: "application/octet-stream", Body: msg})
		}
	}
	benchCreate(b, e, 99, "application/octet-stream")
	for i := 0; i < 1000; i++ {
		e.Append(bkey(99), AppendRequest{MediaType: "application/octet-stream", Body: msg})
	}
	e2 := reopenBench(b, e)
	readAll := func(b *testing.B, k model.StreamKey) {
		from := model.OffsetSpec{Kind: model.SpecStart}
		n := 0
		for {
			res, err := e2.Read(k, ReadRequest{From: from, MaxBytes: 64 << 10})
			if err != nil {
				b.Fatal(err)
			}
			n += len(res.Data)
			if res.UpToDate {
				break
			}
			from = model.OffsetSpec{Kind: model.SpecAt, At: res.Next}
		}
		b.SetBytes(int64(n))
	}
	b.Run("plain", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			readAll(b, bkey(99))
		}
	})
	b.Run("fork-depth-10", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			readAll(b, bkey(10))
		}
	})
}

// BenchmarkTailCacheAdd: one 100-byte message added to a full 256 KiB tail cache (what
// every append to a busy stream does after its commit).
func BenchmarkTailCacheAdd(b *testing.B) {
	var c tailCache
	c.max = 256 << 10
	c.reset(0)
	val := make([]byte, 101)
	b.ReportAllocs()
	for i := 0; i < b.N+5000; i++ {
		if i == 5000 {
			b.ResetTimer()
		}
		c.add([]cachedMsg{{Off: uint64(i) * 100, Val: val}})
	}
}

// BenchmarkAppendSpread: appends of 100 B by 50 writers to 100 streams or spread over
// 20,000 (issue 19, target 6), without fsync, on a clock that advances 100 us per append,
// so that a spread writer comes back to a stream every 2 s: past the refresh interval of
// a stream with a sliding TTL, within that of any other (metaRefreshIdleMs).
// cpu-ns/append is the process's CPU time per append, the checkpoints included.
func BenchmarkAppendSpread(b *testing.B) {
	for _, streams := range []int{100, 20000} {
		b.Run(fmt.Sprintf("streams=%d", streams), func(b *testing.B) {
			var clock atomic.Int64
			clock.Store(1_800_000_000_000)
			e, err := Open(b.TempDir(), Options{NoSync: true, SweepInterval: time.Hour,
				Clock: func() time.Time { return time.UnixMilli(clock.Load() / 1000) }})
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			if _, err := e.CreateBucket("bench"); err != nil {
				b.Fatal(err)
			}
			for i := range streams {
				benchCreate(b, e, i, "text/plain")
			}
			body := make([]byte, 100)
			const writers = 50
			per := streams / writers
			var next atomic.Int64
			cpu0 := proccpu.Nanos()
			b.ResetTimer()
			var wg sync.WaitGroup
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for j := 0; next.Add(1) <= int64(b.N); j++ {
						clock.Add(100)
						k := bkey(w*per + j%per)
						if _, err := e.Append(k, AppendRequest{MediaType: "text/plain", Body: body}); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			b.ReportMetric(float64(proccpu.Nanos()-cpu0)/float64(b.N), "cpu-ns/append")
		})
	}
}
