package engine

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"
)

// The expiry index agrees with a plain map on random adds, removes and pops over many
// buckets: bucketsDue lists exactly the buckets with an entry due, popDue returns exactly
// the bucket's due entries, and an entry is indexed once.
func TestExpiryIndexAgreesWithAMap(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	var x expiryIndex
	ref := map[uint64]expiryEntry{} // by sid
	bucketOf := func(sid uint64) string { return fmt.Sprint("b", sid%13) }
	for step := 0; step < 20000; step++ {
		sid := uint64(1 + r.Intn(300))
		now := int64(r.Intn(1000))
		switch r.Intn(4) {
		case 0, 1:
			en := expiryEntry{due: int64(r.Intn(1000)), sid: sid, key: fmt.Sprint(sid)}
			x.add(bucketOf(sid), en)
			if _, ok := ref[sid]; !ok {
				ref[sid] = en
			}
		case 2:
			x.remove(bucketOf(sid), sid)
			delete(ref, sid)
		default:
			b := bucketOf(sid)
			var got, want []uint64
			for _, en := range x.popDue(b, now) {
				got = append(got, en.sid)
			}
			for s, en := range ref {
				if bucketOf(s) == b && en.due <= now {
					want = append(want, s)
					delete(ref, s)
				}
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("step %d: popDue(%s, %d) = %v, want %v", step, b, now, got, want)
			}
		}
		got := x.bucketsDue(now)
		var want []string
		for s, en := range ref {
			if b := bucketOf(s); en.due <= now && !slices.Contains(want, b) {
				want = append(want, b)
			}
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) || len(x.at) != len(ref) {
			t.Fatalf("step %d: bucketsDue(%d) = %v, want %v; %d indexed, want %d", step, now, got, want, len(x.at), len(ref))
		}
	}
}

// BenchmarkExpiryBucketsDue is a sweep's look at an index of 100,000 buckets of which
// none is due.
func BenchmarkExpiryBucketsDue(b *testing.B) {
	var x expiryIndex
	for i := range 100_000 {
		x.add(fmt.Sprint("b", i), expiryEntry{due: 1 << 40, sid: uint64(i + 1), key: "k"})
	}
	for b.Loop() {
		if len(x.bucketsDue(1000)) != 0 {
			b.Fatal("due")
		}
	}
}
