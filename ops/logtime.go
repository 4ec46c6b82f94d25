package ops

import (
	"sync/atomic"
	"time"
)

// stampCache holds the formatted date, time of day and zone of the last second a request
// line was written in, so that a line formats only its fraction of a second (issue 19).
type stampCache struct{ p atomic.Pointer[secondStamp] }

// secondStamp is one second formatted: head "2006-01-02T15:04:05", zone "Z" or "-07:00".
type secondStamp struct {
	sec  int64
	loc  *time.Location
	head []byte
	zone []byte
}

// get returns the stamp of t's second, or nil when t's form is not the usual one (a year
// outside 0000-9999).
func (c *stampCache) get(t time.Time) *secondStamp {
	sec := t.Unix()
	if s := c.p.Load(); s != nil && s.sec == sec && s.loc == t.Location() {
		return s
	}
	b := t.Truncate(time.Second).AppendFormat(nil, time.RFC3339)
	const headLen = len("2006-01-02T15:04:05")
	if len(b) <= headLen || (b[headLen] != 'Z' && b[headLen] != '+' && b[headLen] != '-') {
		return nil
	}
	s := &secondStamp{sec: sec, loc: t.Location(), head: b[:headLen:headLen], zone: b[headLen:]}
	c.p.Store(s)
	return s
}

// appendMillis appends t in RFC 3339 with exactly three fraction digits, as slog's text
// handler writes its time.
func (c *stampCache) appendMillis(b []byte, t time.Time) []byte {
	s := c.get(t)
	if s == nil {
		n := len(b) + len("2006-01-02T15:04:05.000")
		// RFC3339Nano drops trailing zeros: a tenth of a millisecond more, the 4th digit cut
		b = t.Truncate(time.Millisecond).Add(time.Millisecond/10).AppendFormat(b, time.RFC3339Nano)
		return append(b[:n], b[n+1:]...)
	}
	ms := t.Nanosecond() / 1e6
	b = append(b, s.head...)
	b = append(b, '.', byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10))
	return append(b, s.zone...)
}

// appendNano appends t as time.RFC3339Nano formats it (slog's JSON handler's time): the
// nanoseconds without trailing zeros, none when zero.
func (c *stampCache) appendNano(b []byte, t time.Time) []byte {
	s := c.get(t)
	if s == nil {
		return t.AppendFormat(b, time.RFC3339Nano)
	}
	b = append(b, s.head...)
	if ns := t.Nanosecond(); ns != 0 {
		var d [10]byte
		d[0] = '.'
		for i := 9; i >= 1; i-- {
			d[i] = byte('0' + ns%10)
			ns /= 10
		}
		n := 10
		for d[n-1] == '0' {
			n--
		}
		b = append(b, d[:n]...)
	}
	return append(b, s.zone...)
}
