package fuzz

import (
	"errors"
	"math/big"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dsd-project/dsd/model"
)

var (
	digits = regexp.MustCompile(`^[0-9]+$`)
	ttl    = regexp.MustCompile(`^(0|[1-9][0-9]*)$`)
	// rfc3339 is RFC 3339's date-time, except that a comma may introduce the fraction:
	// Go's time.Parse accepts ISO 8601's decimal comma, a harmless leniency.
	rfc3339  = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}([.,][0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})$`)
	maxSafe  = big.NewInt(model.MaxSafeInt)
	fuzzNow  = time.Date(2027, 1, 2, 3, 4, 5, 0, time.UTC)
	asciiOWS = " \t"
)

// safeInt is the oracle for producer integers and TTLs: the decimal value is at most
// 2^53-1 (B-5.2.1-02, A-13).
func safeInt(s string) bool {
	v, ok := new(big.Int).SetString(s, 10)
	return ok && v.Sign() >= 0 && v.Cmp(maxSafe) <= 0
}

// producerIntOK is the spec's rule for Producer-Epoch and Producer-Seq: ^[0-9]+$, leading
// zeros accepted, at most 2^53-1.
func producerIntOK(s string) bool { return digits.MatchString(s) && safeInt(s) }

// FuzzProducerHeaders: the three producer headers are all-or-none, the id non-empty, and
// epoch and seq match ^[0-9]+$ with a value at most 2^53-1; everything else is
// ErrBadProducer (B-5.2.1-01, B-5.2.1-02, A-08).
func FuzzProducerHeaders(f *testing.F) {
	for _, c := range []struct {
		id, e, s string
		mask     uint8
	}{{"p", "0", "0", 7}, {"p", "1abc", "0", 7}, {"p", "0", "0xyz", 7}, {"p", "1e3", "0", 7},
		{"p", "-1", "0", 7}, {"", "0", "0", 7}, {"p", "0", "0", 3}, {"p", "9007199254740991", "007", 7},
		{"p", "9007199254740992", "0", 7}, {"p", "00000000000000000000000000000001", "0", 7}, {"", "", "", 0}} {
		f.Add(c.id, c.e, c.s, c.mask)
	}
	f.Fuzz(func(t *testing.T, id, epoch, seq string, mask uint8) {
		hasID, hasEpoch, hasSeq := mask&1 != 0, mask&2 != 0, mask&4 != 0
		p, err := model.ParseProducer(id, epoch, seq, hasID, hasEpoch, hasSeq)
		none := !hasID && !hasEpoch && !hasSeq
		valid := hasID && hasEpoch && hasSeq && id != "" && producerIntOK(epoch) && producerIntOK(seq)
		switch {
		case none:
			if p != nil || err != nil {
				t.Fatalf("no producer headers: %v, %v", p, err)
			}
		case valid && err != nil:
			t.Fatalf("valid producer (%q,%q,%q) refused: %v", id, epoch, seq, err)
		case valid:
			if p.ID != id || p.Epoch != mustUint(epoch) || p.Seq != mustUint(seq) {
				t.Fatalf("(%q,%q,%q) parsed as %+v", id, epoch, seq, *p)
			}
		case err == nil:
			t.Fatalf("invalid producer (%q,%q,%q, mask %d) accepted as %+v", id, epoch, seq, mask, *p)
		case !errors.Is(err, model.ErrBadProducer):
			t.Fatalf("error %v is not ErrBadProducer", err)
		}
	})
}

func mustUint(s string) uint64 {
	v, _ := new(big.Int).SetString(s, 10)
	return v.Uint64()
}

// Producer integers of any length with a small value are valid: A-08 accepts leading
// zeros and sets no length limit. Regression test of KI-3. Spec: A-08, B-5.2.1-02.
func TestKI3LongProducerIntegers(t *testing.T) {
	s := strings.Repeat("0", 33) + "1"
	if v, err := model.ParseProducerInt(s); err != nil || v != 1 {
		t.Fatalf("ParseProducerInt(%q) = %d, %v; want 1", s, v, err)
	}
}

// FuzzTTLParse: Stream-TTL is accepted exactly when it is a decimal integer with no
// sign, leading zero, fraction or exponent, at most 2^53-1 (B-5.1-04, A-13).
func FuzzTTLParse(f *testing.F) {
	for _, s := range []string{"0", "60", "abc", "-1", "00060", "+60", "60.5", "1e3", "", " 60",
		"9007199254740991", "9007199254740992", "18446744073709551616"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := model.ParseTTL(s)
		want := ttl.MatchString(s) && safeInt(s)
		if want != (err == nil) {
			t.Fatalf("ParseTTL(%q) = %d, %v; valid by the grammar: %t", s, v, err, want)
		}
		if err == nil && v != mustUint(s) {
			t.Fatalf("ParseTTL(%q) = %d", s, v)
		}
		if err != nil && !errors.Is(err, model.ErrBadTTL) {
			t.Fatalf("error %v is not ErrBadTTL", err)
		}
	})
}

// A Stream-Expires-At with a one-digit hour is not RFC 3339 and is refused. Regression
// test of KI-4. Spec: B-5.1-06, A-12 (RFC 3339 §5.6: time-hour = 2DIGIT).
func TestKI4ExpiresAtIsStrictRFC3339(t *testing.T) {
	if v, err := model.ParseExpiresAt("2070-01-01T0:00:00Z", fuzzNow); err == nil {
		t.Fatalf("accepted as %v", v)
	}
}

// FuzzExpiresAtParse: an accepted Stream-Expires-At is an RFC 3339 timestamp (date,
// "T", time, optional fraction, "Z" or a numeric offset) after now; it is returned in
// UTC, and the millisecond form HEAD echoes parses back to the same millisecond
// (B-5.1-06, A-12).
func FuzzExpiresAtParse(f *testing.F) {
	for _, s := range []string{"2027-01-02T03:04:06Z", "2027-01-02T03:04:05Z", "2030-06-01T00:00:00.123Z",
		"2030-06-01T00:00:00+00:00", "2030-06-01T01:00:00+01:00", "not-a-timestamp", "2030-06-01 00:00:00Z",
		"2030-06-01t00:00:00z", "2030-13-01T00:00:00Z", "2030-06-01T24:00:00Z", "2030-06-01T00:00:00,5Z",
		" 2030-06-01T00:00:00Z ", "2030-06-01T00:00:60Z", "+2030-06-01T00:00:00Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := model.ParseExpiresAt(s, fuzzNow)
		if err != nil {
			if !errors.Is(err, model.ErrBadExpiresAt) {
				t.Fatalf("error %v is not ErrBadExpiresAt", err)
			}
			return
		}
		if !rfc3339.MatchString(strings.TrimSpace(s)) {
			t.Fatalf("ParseExpiresAt accepted %q, which is not RFC 3339", s)
		}
		if !v.After(fuzzNow) || v.Location() != time.UTC {
			t.Fatalf("ParseExpiresAt(%q) = %v: not after now, or not UTC", s, v)
		}
		echo := model.FormatExpiresAt(v)
		back, err := model.ParseExpiresAt(echo, fuzzNow.Add(-time.Hour))
		if err != nil || back.UnixMilli() != v.UnixMilli() {
			t.Fatalf("HEAD echo %q of %v parses to %v (%v)", echo, v, back, err)
		}
	})
}

// FuzzStreamClosedHeader: Stream-Closed means closed exactly when its value is "true"
// compared case-insensitively after trimming; every other value is absent
// (B-4.1-01, A-30). The oracle is exact for ASCII values; for others it requires that a
// "closed" verdict come from the letters t-r-u-e with only white space around.
func FuzzStreamClosedHeader(f *testing.F) {
	for _, s := range []string{"true", "TRUE", "True", " true\t", "false", "yes", "1", "", "truee", "\u00a0true", "tru e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		got := model.StreamClosedHeader(v)
		ascii := true
		for i := 0; i < len(v); i++ {
			if v[i] >= 0x80 {
				ascii = false
			}
		}
		if ascii {
			trimmed := strings.Trim(v, asciiOWS+"\r\n\v\f")
			if want := strings.ToLower(trimmed) == "true"; got != want {
				t.Fatalf("StreamClosedHeader(%q) = %t, want %t", v, got, want)
			}
			return
		}
		if got && strings.TrimSpace(strings.Replace(strings.ToLower(v), "true", "", 1)) != "" {
			t.Fatalf("StreamClosedHeader(%q) = true, but more than white space surrounds the value", v)
		}
	})
}
