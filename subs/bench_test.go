package subs

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkStreamChanged measures the fan-out of one append notification over a bucket
// with 1,000 glob subscriptions of which one matches (the engine calls it per commit).
func BenchmarkStreamChanged(b *testing.B) {
	w, err := New(Options{Store: newFakeStore(), Clock: newFakeClock()})
	if err != nil {
		b.Fatal(err)
	}
	w.mu.Lock()
	for i := range 1000 {
		m := &sub{s: Subscription{Key: Key{Bucket: "b", ID: fmt.Sprint(i)}, Pattern: fmt.Sprintf("tenant-%d/**", i), LeaseTTL: time.Second}}
		w.put(m)
	}
	w.mu.Unlock()
	b.ReportAllocs()
	for b.Loop() {
		w.StreamChanged("b", "tenant-7/orders/1")
	}
}

// BenchmarkSignature measures signing one 1 KiB webhook body.
func BenchmarkSignature(b *testing.B) {
	k, _, _ := ensureKeys(Keys{}, time.Now(), cryptoRand)
	s := newSigner(k.Signing[0])
	body := make([]byte, 1024)
	b.ReportAllocs()
	for b.Loop() {
		_ = s.header(time.Unix(1_800_000_000, 0), body)
	}
}
