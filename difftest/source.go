package difftest

import "math/rand/v2"

// Source supplies the generator's choices.
type Source interface {
	// Intn returns a number in [0, n); n > 0.
	Intn(n int) int
	// Done reports that the source has nothing left (a byte source ran out).
	Done() bool
}

// RandSource draws choices from a seeded PRNG; it is never done.
type RandSource struct{ R *rand.Rand }

// NewRandSource returns a RandSource seeded with seed.
func NewRandSource(seed uint64) RandSource {
	return RandSource{R: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// Intn implements Source.
func (s RandSource) Intn(n int) int { return s.R.IntN(n) }

// Done implements Source.
func (s RandSource) Done() bool { return false }

// ByteSource draws choices from fuzzer input: one byte per choice (two when n > 256).
// Once the bytes run out every choice is 0 and Done is true.
type ByteSource struct {
	b   []byte
	pos int
}

// NewByteSource returns a source over b.
func NewByteSource(b []byte) *ByteSource { return &ByteSource{b: b} }

// Intn implements Source.
func (s *ByteSource) Intn(n int) int {
	v := 0
	for need := n; need > 1; need >>= 8 {
		if s.pos >= len(s.b) {
			s.pos++
			return v % n
		}
		v = v<<8 | int(s.b[s.pos])
		s.pos++
	}
	return v % n
}

// Done implements Source.
func (s *ByteSource) Done() bool { return s.pos >= len(s.b) }
