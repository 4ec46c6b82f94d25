package linearizability

import (
	"math/big"
	"math/rand/v2"
	"testing"
)

// The digest composes over concatenation, so the model can fold appends into it.
func TestDigestComposes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 500; i++ {
		a, b := randBytes(rng, rng.IntN(300)), randBytes(rng, rng.IntN(300))
		whole := DigestOf(append(append([]byte{}, a...), b...))
		if got := DigestOf(a).Extend(DigestOf(b), uint64(len(b))); got != whole {
			t.Fatalf("D(a||b) = %d, composed %d (len %d, %d)", whole, got, len(a), len(b))
		}
	}
}

// Pinned vectors: the digest is a file format (histories store it), so it must not
// change silently. They are checked against an independent big-integer evaluation.
func TestDigestVectors(t *testing.T) {
	vectors := map[string]Digest{"": 0, "\x00": 1, "a": 98, "ab": 98*1_000_003 + 99}
	for s, want := range vectors {
		if got := DigestOf([]byte(s)); got != want {
			t.Errorf("D(%q) = %d, want %d", s, got, want)
		}
	}
	rng := rand.New(rand.NewPCG(5, 6))
	p := new(big.Int).SetUint64(digestMod)
	for i := 0; i < 100; i++ {
		b := randBytes(rng, rng.IntN(2000))
		want := new(big.Int)
		for _, c := range b {
			want.Mul(want, big.NewInt(digestBase))
			want.Add(want, big.NewInt(int64(c)+1))
			want.Mod(want, p)
		}
		if got := DigestOf(b); uint64(got) != want.Uint64() {
			t.Fatalf("D(%d bytes) = %d, big-int %s", len(b), got, want)
		}
	}
	if DigestOf([]byte("ab")) == DigestOf([]byte("ba")) {
		t.Fatal("reordering must change the digest")
	}
}

func randBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.IntN(256))
	}
	return b
}

// Removing a prefix's digest leaves the suffix's: reads from a retention boundary are
// checked with it.
func TestDigestSuffix(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for i := 0; i < 500; i++ {
		a, b := randBytes(rng, rng.IntN(300)), randBytes(rng, rng.IntN(300))
		whole := DigestOf(append(append([]byte{}, a...), b...))
		n := uint64(len(a) + len(b))
		if got := whole.Suffix(n, DigestOf(a), uint64(len(a))); got != DigestOf(b) {
			t.Fatalf("suffix of %d after %d bytes: %d, want %d", len(b), len(a), got, DigestOf(b))
		}
	}
}
