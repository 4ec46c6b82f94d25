package httpd

import "time"

// monoBase anchors monoNow: times kept per parked subscriber are 8-byte offsets from it on
// the monotonic clock rather than 24-byte time.Time values (issue 19).
var monoBase = time.Now()

// monoNow is the time since monoBase in nanoseconds, on the monotonic clock.
func monoNow() int64 { return monoOf(time.Now()) }

// monoOf converts a time read with time.Now to monoNow's scale.
func monoOf(t time.Time) int64 { return int64(t.Sub(monoBase)) }

// monoTime converts a monoNow value back to a time.Time (for deadlines and contexts).
func monoTime(m int64) time.Time { return monoBase.Add(time.Duration(m)) }
