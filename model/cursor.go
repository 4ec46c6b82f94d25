package model

import (
	"math/big"
	"strconv"
	"strings"
	"time"
)

// CursorEpoch is the origin of the default cursor: 2024-10-09T00:00:00Z (B-10-06).
const CursorEpoch = 1728432000

// CursorInterval is the length of one cursor interval (B-10-06).
const CursorInterval = 20 * time.Second

// CurrentCursor returns floor((now - CursorEpoch) / 20 s) (B-10-06).
func CurrentCursor(now time.Time) uint64 {
	d := now.Unix() - CursorEpoch
	if d < 0 {
		return 0
	}
	return uint64(d) / uint64(CursorInterval/time.Second)
}

// clientCursor returns the client's cursor as a number when it steers the next cursor:
// a decimal number at or above the current interval. ok is false for an absent,
// non-numeric or older cursor. Cursors beyond 2^64 are numbers too (B-10-07 holds
// for them): those, and only those, are returned in large; the others in n.
func clientCursor(now time.Time, client string) (n uint64, large *big.Int, ok bool) {
	if client == "" || strings.TrimLeft(client, "0123456789") != "" {
		return 0, nil, false
	}
	if n, err := strconv.ParseUint(client, 10, 64); err == nil {
		return n, nil, n >= CurrentCursor(now)
	}
	large, _ = new(big.Int).SetString(client, 10) // beyond uint64: above any interval
	return 0, large, true
}

// CursorSteers reports whether a client cursor influences the next cursor, i.e. is a
// decimal number at or above the current interval. Cursors that do not steer are
// interchangeable.
func CursorSteers(now time.Time, client string) bool {
	_, _, ok := clientCursor(now, client)
	return ok
}

// NextCursor computes the cursor of a live response (B-10-07, A-05). client is the
// request's cursor parameter; jitterSeconds is drawn by the caller uniformly from
// [1, 3600]. When the client's cursor is absent, non-numeric or below the current
// interval, the current interval is returned; otherwise client + max(1, ceil(j/20)), so
// cursors never go backwards, whatever their size.
func NextCursor(now time.Time, client string, jitterSeconds uint64) string {
	n, b, ok := clientCursor(now, client)
	if !ok {
		return strconv.FormatUint(CurrentCursor(now), 10)
	}
	step := max((jitterSeconds+19)/20, 1)
	if b == nil && n+step > n {
		return strconv.FormatUint(n+step, 10)
	}
	if b == nil {
		b = new(big.Int).SetUint64(n)
	}
	return b.Add(b, new(big.Int).SetUint64(step)).String()
}
