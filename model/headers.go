package model

import (
	"fmt"
	"mime"
	"strings"
	"time"
)

// MaxSafeInt is 2^53-1, the largest producer epoch, producer seq and TTL (B-5.2.1-02, A-13).
const MaxSafeInt = 1<<53 - 1

// ParseTTL parses Stream-TTL: a non-negative decimal integer of seconds with no sign,
// leading zero, fraction or exponent, at most 2^53-1 (B-5.1-04, A-13).
// Errors: ErrBadTTL.
func ParseTTL(s string) (uint64, error) {
	if s == "" || (len(s) > 1 && s[0] == '0') {
		return 0, ErrBadTTL
	}
	v, ok := parseDigits(s)
	if !ok || len(s) > 16 || v > MaxSafeInt {
		return 0, ErrBadTTL
	}
	return v, nil
}

// ParseExpiresAt parses Stream-Expires-At as RFC 3339 (fraction and zone offset allowed)
// and requires it to be after now (B-5.1-06, A-12).
// Errors: ErrBadExpiresAt.
func ParseExpiresAt(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if !rfc3339Shape(s) {
		return time.Time{}, ErrBadExpiresAt
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, ErrBadExpiresAt
	}
	if !t.After(now) {
		return time.Time{}, fmt.Errorf("%w: %s is not in the future", ErrBadExpiresAt, s)
	}
	return t.UTC(), nil
}

// rfc3339Shape checks RFC 3339's date-time grammar (§5.6), which Go's time.Parse
// applies leniently (it takes a one-digit hour or a comma before the fraction):
// YYYY-MM-DD "T" hh:mm:ss ["." 1*DIGIT] ("Z" / ("+" / "-") hh:mm), T and Z in either case.
func rfc3339Shape(s string) bool {
	const fixed = "dddd-dd-ddTdd:dd:dd"
	if len(s) < len(fixed)+1 {
		return false
	}
	for i := 0; i < len(fixed); i++ {
		c := s[i]
		switch fixed[i] {
		case 'd':
			if c < '0' || c > '9' {
				return false
			}
		case 'T':
			if c != 'T' && c != 't' {
				return false
			}
		default:
			if c != fixed[i] {
				return false
			}
		}
	}
	rest := s[len(fixed):]
	if rest[0] == '.' {
		n := 1
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		if n == 1 {
			return false
		}
		rest = rest[n:]
	}
	switch {
	case rest == "Z" || rest == "z":
		return true
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		_, ok1 := parseDigits(rest[1:3])
		_, ok2 := parseDigits(rest[4:6])
		return ok1 && ok2
	}
	return false
}

// FormatExpiresAt renders an expiry instant as HEAD echoes it: UTC with milliseconds.
func FormatExpiresAt(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z07:00")
}

// ParseProducerInt parses a producer epoch or seq: ^[0-9]+$ (leading zeros accepted), at
// most 2^53-1 (B-5.2.1-02, A-08). Errors: ErrBadProducer.
func ParseProducerInt(s string) (uint64, error) {
	if s == "" {
		return 0, ErrBadProducer
	}
	t := strings.TrimLeft(s, "0") // leading zeros are accepted, however many
	if len(t) > 16 {
		return 0, ErrBadProducer
	}
	v, ok := parseDigits(t)
	if !ok || v > MaxSafeInt {
		return 0, ErrBadProducer
	}
	return v, nil
}

// Producer is an idempotent producer's (Producer-Id, Producer-Epoch, Producer-Seq) triple
// (B-5.2.1-01).
type Producer struct {
	ID    string
	Epoch uint64
	Seq   uint64
}

// ParseProducer parses the three producer headers; has* say which were present. None
// present gives (nil, nil). Errors: ErrBadProducer for a partial set, an empty id, or a
// malformed integer (B-5.2.1-01, B-5.2.1-02).
func ParseProducer(id, epoch, seq string, hasID, hasEpoch, hasSeq bool) (*Producer, error) {
	if !hasID && !hasEpoch && !hasSeq {
		return nil, nil
	}
	if !hasID || !hasEpoch || !hasSeq {
		return nil, fmt.Errorf("%w: partial producer headers", ErrBadProducer)
	}
	if id == "" {
		return nil, fmt.Errorf("%w: empty Producer-Id", ErrBadProducer)
	}
	e, err := ParseProducerInt(epoch)
	if err != nil {
		return nil, fmt.Errorf("%w: Producer-Epoch %q", ErrBadProducer, epoch)
	}
	q, err := ParseProducerInt(seq)
	if err != nil {
		return nil, fmt.Errorf("%w: Producer-Seq %q", ErrBadProducer, seq)
	}
	return &Producer{ID: id, Epoch: e, Seq: q}, nil
}

// StreamClosedHeader reports whether a Stream-Closed value means "closed": "true" after
// trimming, compared case-insensitively; every other value counts as absent (B-4.1-01,
//
func StreamClosedHeader(v string) bool {
	return strings.EqualFold(strings.TrimSpace(v), "true")
}

// MediaType returns the normalized media type of a Content-Type value: the part before
// ';', trimmed and lowercased. Errors: ErrBadContentType unless it is type/subtype
//
func MediaType(ct string) (string, error) {
	if plainMediaType(ct) {
		return ct, nil // already normalized: what mime.ParseMediaType would return, without its map
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil && err != mime.ErrInvalidMediaParameter {
		return "", fmt.Errorf("%w: %q", ErrBadContentType, ct)
	}
	slash := strings.IndexByte(mt, '/')
	if slash <= 0 || slash == len(mt)-1 {
		return "", fmt.Errorf("%w: %q", ErrBadContentType, ct)
	}
	return mt, nil
}

// plainMediaType reports whether ct is a bare lowercase type/subtype (no parameters, no
// spaces), the common Content-Type that needs no parsing.
func plainMediaType(ct string) bool {
	slash := -1
	for i := 0; i < len(ct); i++ {
		switch c := ct[i]; {
		case c == '/' && slash < 0:
			slash = i
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '+', c == '.':
		default:
			return false
		}
	}
	return slash > 0 && slash < len(ct)-1
}

// DefaultContentType is the type of a stream created without Content-Type (B-5.1-03).
const DefaultContentType = "application/octet-stream"

// IsJSON reports whether a normalized media type selects JSON mode (B-9.1-01, D3, A-20).
func IsJSON(mediaType string) bool { return mediaType == "application/json" }

// IsTextual reports whether SSE sends a stream of this normalized media type as text
// (text/* and application/json) rather than base64 (B-5.8-02, A-20).
func IsTextual(mediaType string) bool {
	return strings.HasPrefix(mediaType, "text/") || mediaType == "application/json"
}
