package model

import (
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

// NextCursor computes the cursor of a live response (B-10-07, A-05). client is the
// request's cursor parameter; jitterSeconds is drawn by the caller uniformly from
// [1, 3600]. When the client's cursor is absent, non-numeric or below the current
// interval, the current interval is returned; otherwise client + max(1, ceil(j/20)), so
// cursors never go backwards.
func NextCursor(now time.Time, client string, jitterSeconds uint64) string {
	cur := CurrentCursor(now)
	c, err := strconv.ParseUint(client, 10, 64)
	if client == "" || err != nil || c < cur {
		return strconv.FormatUint(cur, 10)
	}
	step := (jitterSeconds + 19) / 20
	if step < 1 {
		step = 1
	}
	return strconv.FormatUint(c+step, 10)
}
