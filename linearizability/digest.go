package linearizability

import "math/bits"

// Digest is a polynomial hash of a byte string modulo the Mersenne prime 2^61-1, so that
// the digest of a concatenation follows from the digests and lengths of its parts:
//
//	D(a || b) = D(a) * B^len(b) + D(b)   (mod 2^61-1)
//
// The model therefore keeps a stream's whole content as (length, digest): an append of
// a body with digest d and length n moves it to (len+n, digest*B^n + d), and a read from
// the start is checked by hashing the bytes it returned. Lost, duplicated, reordered or
// corrupted bytes all change the digest (s2-verification's chained hash, made to compose
// over byte strings so that readers need not know append boundaries). Each byte counts as
// its value plus one, so zero bytes are not invisible. Not cryptographic.
type Digest uint64

const (
	digestMod  = 1<<61 - 1
	digestBase = 1_000_003
)

// DigestOf returns the digest of b.
func DigestOf(b []byte) Digest {
	var d uint64
	for _, c := range b {
		d = addMod(mulMod(d, digestBase), uint64(c)+1)
	}
	return Digest(d)
}

// Extend returns the digest of a || b, given d = D(a), db = D(b) and n = len(b).
func (d Digest) Extend(db Digest, n uint64) Digest {
	return Digest(addMod(mulMod(uint64(d), powMod(digestBase, n)), uint64(db)))
}

func mulMod(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	// a*b = hi*2^64 + lo; 2^61 = 1 (mod p), so 2^64 = 8.
	r := (hi<<3 | lo>>61) + (lo & digestMod)
	for r >= digestMod {
		r -= digestMod
	}
	return r
}

func addMod(a, b uint64) uint64 {
	r := a + b
	if r >= digestMod {
		r -= digestMod
	}
	return r
}

func powMod(b, e uint64) uint64 {
	r := uint64(1)
	for ; e > 0; e >>= 1 {
		if e&1 == 1 {
			r = mulMod(r, b)
		}
		b = mulMod(b, b)
	}
	return r
}

// Suffix returns the digest of b, given d = D(a || b) of n bytes and p = D(a) of m
// bytes (m <= n): D(b) = D(a||b) - D(a) * B^(n-m). The model uses it for reads that
// start at a retention boundary: it knows the digest of the whole content and of the
// retained-away prefix.
func (d Digest) Suffix(n uint64, p Digest, m uint64) Digest {
	return Digest(addMod(uint64(d), digestMod-mulMod(uint64(p), powMod(digestBase, n-m))))
}
