package model

import (
	"math/big"
	"strconv"
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
// a decimal number (any size: B-10-07 holds for cursors beyond 2^64 too) at or above the
// current interval. ok is false for an absent, non-numeric or older cursor.
func clientCursor(now time.Time, client string) (n *big.Int, ok bool) {
	if client == "" {
		return nil, false
	}
	for i := 0; i < len(client); i++ {
		if client[i] < '0' || client[i] > '9' {
			return nil, false
		}
	}
	n, _ = new(big.Int).SetString(client, 10)
	cur := new(big.Int).SetUint64(CurrentCursor(now))
	return n, n.Cmp(cur) >= 0
}

// CursorSteers reports whether a client cursor influences the next cursor, i.e. is a
// decimal number at or above the current interval. Cursors that do not steer are
// interchangeable.
func CursorSteers(now time.Time, client string) bool {
	_, ok := clientCursor(now, client)
	return ok
}

// NextCursor computes the cursor of a live response (B-10-07, A-05). client is the
// request's cursor parameter; jitterSeconds is drawn by the caller uniformly from
// [1, 3600]. When the client's cursor is absent, non-numeric or below the current
// interval, the current interval is returned; otherwise client + max(1, ceil(j/20)), so
// cursors never go backwards, whatever their size.
func NextCursor(now time.Time, client string, jitterSeconds uint64) string {
	c, ok := clientCursor(now, client)
	if !ok {
		return strconv.FormatUint(CurrentCursor(now), 10)
	}
	step := max((jitterSeconds+19)/20, 1)
	return c.Add(c, new(big.Int).SetUint64(step)).String()
}
