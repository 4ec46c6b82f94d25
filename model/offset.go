package model

import (
	"fmt"
	"math"
)

// Offset is a position in a stream's canonical bytes (D2): the byte count of everything
// before it. Its wire token is "%016d_%016d" (segment 0, then the position), so the
// lexicographic order of tokens is stream order (B-8-01). Forks share the offset space of
// their source (B-8-10).
type Offset uint64

// ZeroOffset is the tail of a new, empty stream: "0000000000000000_0000000000000000".
const ZeroOffset Offset = 0

// MaxOffset is the largest position a token can carry (16 decimal digits).
const MaxOffset Offset = 9999999999999999

// offsetBeyond is what a well-formed token with a non-zero segment parses to: a position
// past every tail, so it is rejected as "beyond the tail" (D2).
const offsetBeyond Offset = math.MaxUint64

// String returns the wire token.
func (o Offset) String() string {
	switch {
	case o == offsetBeyond:
		return "9999999999999999_9999999999999999"
	case o > MaxOffset: // not a wire position; rendered with all its digits
		return fmt.Sprintf("0000000000000000_%016d", uint64(o))
	}
	var b [33]byte
	return string(o.AppendToken(b[:0])) // one allocation (fmt took three)
}

// AppendToken appends the wire token to b without allocating.
func (o Offset) AppendToken(b []byte) []byte {
	b = append(b, "0000000000000000_"...)
	var d [16]byte
	v := uint64(o)
	for i := 15; i >= 0; i-- {
		d[i] = byte('0' + v%10)
		v /= 10
	}
	return append(b, d[:]...)
}

// ParseOffset parses a wire token strictly: ^[0-9]{16}_[0-9]{16}$ (D2, A-35). Sentinels
// are not offsets: "-1" and "now" fail here and are handled by ParseOffsetSpec. A token
// with a non-zero segment parses to a position beyond every tail.
// Errors: ErrBadOffset.
func ParseOffset(s string) (Offset, error) {
	if len(s) != 33 || s[16] != '_' {
		return 0, ErrBadOffset
	}
	seg, ok1 := parseDigits(s[:16])
	pos, ok2 := parseDigits(s[17:])
	if !ok1 || !ok2 {
		return 0, ErrBadOffset
	}
	if seg != 0 {
		return offsetBeyond, nil
	}
	return Offset(pos), nil
}

func parseDigits(s string) (uint64, bool) {
	var v uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	return v, true
}

// OffsetSpecKind says what a client asked for in an offset parameter.
type OffsetSpecKind uint8

const (
	// SpecStart is "-1" or an omitted offset: the stream's first retained position (B-8-03).
	SpecStart OffsetSpecKind = iota
	// SpecNow is "now": the tail at the time of the request (B-8-04..07).
	SpecNow
	// SpecAt is a concrete offset token.
	SpecAt
)

// OffsetSpec is a client's requested read position. A sentinel is never an Offset.
type OffsetSpec struct {
	Kind OffsetSpecKind
	At   Offset // meaningful only when Kind == SpecAt
}

// ParseOffsetSpec parses the offset query parameter: "-1", "now" or a token (B-8-03,
// B-5.6-08). The empty string is malformed (the parameter was given without a value).
// Errors: ErrBadOffset.
func ParseOffsetSpec(s string) (OffsetSpec, error) {
	switch s {
	case "-1":
		return OffsetSpec{Kind: SpecStart}, nil
	case "now":
		return OffsetSpec{Kind: SpecNow}, nil
	}
	o, err := ParseOffset(s)
	if err != nil {
		return OffsetSpec{}, err
	}
	return OffsetSpec{Kind: SpecAt, At: o}, nil
}

// String returns the wire form of the spec.
func (s OffsetSpec) String() string {
	switch s.Kind {
	case SpecStart:
		return "-1"
	case SpecNow:
		return "now"
	}
	return s.At.String()
}
