package main

import (
	"context"
	"sync"
	"time"
)

// forEach calls fn(ctx, i) for i in [0, n) with at most conns calls in flight. The first
// error cancels the rest and is returned.
func forEach(ctx context.Context, n, conns int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(1, min(conns, n)) {
		wg.Go(func() {
			for i := range next {
				if err := fn(ctx, i); err != nil {
					cancel(err)
				}
			}
		})
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return nil
}

// opResult is what one closed-loop operation reports.
type opResult struct {
	status  int   // HTTP status, 0 on a transport error
	err     error // transport or body error
	records int64 // records acknowledged: 1 per successful append, per 2xx frame of a batch
	bytes   int64 // payload bytes acknowledged
}

// loopStats aggregates a closed-loop run over its measured window.
type loopStats struct {
	Elapsed  time.Duration // from the start of the measured window to the last completion
	Ops      int64         // operations started in the measured window
	AllOps   int64         // operations run, warm-up included
	CPU      time.Duration // this process's CPU time over the whole loop, warm-up included
	Records  int64         // records acknowledged by those operations
	Bytes    int64         // payload bytes acknowledged by those operations
	Latency  Histogram     // per-operation latency
	Statuses Statuses      // per-operation outcome
}

// perSecond returns n per second of s.Elapsed.
func (s *loopStats) perSecond(n int64) float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(n) / s.Elapsed.Seconds()
}

// closedLoop runs conns workers; each repeats op back to back (the next request leaves as
// soon as the previous answer is read) for warmup+dur. Operations started during warmup run
// but are not recorded. op gets the worker number, that worker's operation count and whether
// this operation falls in the measured window.
func closedLoop(ctx context.Context, conns int, warmup, dur time.Duration,
	op func(ctx context.Context, worker, iter int, measured bool) opResult) *loopStats {
	cpu0 := processCPU()
	start := time.Now()
	measureFrom := start.Add(warmup)
	end := measureFrom.Add(dur)
	per := make([]*loopStats, conns)
	last := make([]time.Time, conns)
	var wg sync.WaitGroup
	for w := range conns {
		st := &loopStats{Statuses: Statuses{}}
		per[w] = st
		wg.Go(func() {
			for iter := 0; ctx.Err() == nil; iter++ {
				t0 := time.Now()
				if !t0.Before(end) {
					return
				}
				measured := !t0.Before(measureFrom)
				r := op(ctx, w, iter, measured)
				t1 := time.Now()
				st.AllOps++
				if !measured {
					continue
				}
				st.Ops++
				st.Latency.Record(t1.Sub(t0))
				st.Statuses.Inc(r.status, r.err)
				st.Records += r.records
				st.Bytes += r.bytes
				last[w] = t1
			}
		})
	}
	wg.Wait()
	total := &loopStats{Statuses: Statuses{}}
	finish := measureFrom
	for w, st := range per {
		total.Ops += st.Ops
		total.AllOps += st.AllOps
		total.Records += st.Records
		total.Bytes += st.Bytes
		total.Latency.Merge(&st.Latency)
		total.Statuses.Add(st.Statuses)
		if last[w].After(finish) {
			finish = last[w]
		}
	}
	total.Elapsed = finish.Sub(measureFrom)
	total.CPU = processCPU() - cpu0
	return total
}
