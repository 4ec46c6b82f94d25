package main

import (
	"testing"
	"time"
)

func TestHistogramEmptyAnswersZero(t *testing.T) {
	var h Histogram
	if h.Quantile(0.99) != 0 || h.Max() != 0 || h.Mean() != 0 || h.Count() != 0 {
		t.Fatalf("empty histogram: p99=%v max=%v mean=%v count=%d", h.Quantile(0.99), h.Max(), h.Mean(), h.Count())
	}
}

func TestHistogramNearestRankQuantiles(t *testing.T) {
	var h Histogram
	// 1..100 ms recorded in reverse so that sorting matters.
	for i := 100; i >= 1; i-- {
		h.Record(time.Duration(i) * time.Millisecond)
	}
	cases := []struct {
		q    float64
		want time.Duration
	}{
		{0.01, 1 * time.Millisecond},
		{0.5, 50 * time.Millisecond},
		{0.9, 90 * time.Millisecond},
		{0.99, 99 * time.Millisecond},
		{0.999, 100 * time.Millisecond},
		{1, 100 * time.Millisecond},
	}
	for _, c := range cases {
		if got := h.Quantile(c.q); got != c.want {
			t.Errorf("Quantile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
	if h.Max() != 100*time.Millisecond {
		t.Errorf("Max = %v", h.Max())
	}
	if h.Mean() != 50500*time.Microsecond {
		t.Errorf("Mean = %v, want 50.5ms", h.Mean())
	}
}

func TestHistogramSmallSampleP99IsMax(t *testing.T) {
	var h Histogram
	for _, ms := range []int{3, 1, 2} {
		h.Record(time.Duration(ms) * time.Millisecond)
	}
	if got := h.Quantile(0.99); got != 3*time.Millisecond {
		t.Fatalf("p99 of 3 samples = %v, want the max 3ms", got)
	}
	if got := h.Quantile(0.5); got != 2*time.Millisecond {
		t.Fatalf("p50 of {1,2,3} = %v, want 2ms", got)
	}
}

func TestHistogramMergeKeepsAllSamplesAndResorts(t *testing.T) {
	var a, b Histogram
	a.Record(5 * time.Millisecond)
	a.Record(1 * time.Millisecond)
	_ = a.Quantile(0.5) // sorts a
	b.Record(0)
	b.Record(9 * time.Millisecond)
	a.Merge(&b)
	if a.Count() != 4 {
		t.Fatalf("Count after merge = %d, want 4", a.Count())
	}
	if a.Quantile(0.25) != 0 || a.Max() != 9*time.Millisecond {
		t.Fatalf("after merge p25=%v max=%v, want 0 and 9ms", a.Quantile(0.25), a.Max())
	}
	if b.Count() != 2 {
		t.Fatalf("Merge changed its argument: count %d", b.Count())
	}
}

func BenchmarkHistogramRecord(b *testing.B) {
	var h Histogram
	for i := 0; b.Loop(); i++ {
		h.Record(time.Duration(i))
	}
}
