package conformance

import "time"

// Protocol vocabulary, restated from the base protocol (§13 header registry) and the
// extension spec. The kit deliberately does not import the server's constants.
const (
	hContentType   = "Content-Type"
	hCacheControl  = "Cache-Control"
	hETag          = "ETag"
	hIfNoneMatch   = "If-None-Match"
	hLocation      = "Location"
	hNosniff       = "X-Content-Type-Options"
	hCORP          = "Cross-Origin-Resource-Policy"
	hNextOffset    = "Stream-Next-Offset"
	hUpToDate      = "Stream-Up-To-Date"
	hClosed        = "Stream-Closed"
	hCursor        = "Stream-Cursor"
	hSeq           = "Stream-Seq"
	hTTL           = "Stream-TTL"
	hExpiresAt     = "Stream-Expires-At"
	hSSEEncoding   = "Stream-SSE-Data-Encoding"
	hExtensions    = "Stream-Extensions"
	hProducerID    = "Producer-Id"
	hProducerEpoch = "Producer-Epoch"
	hProducerSeq   = "Producer-Seq"
	hExpectedSeq   = "Producer-Expected-Seq"
	hReceivedSeq   = "Producer-Received-Seq"
)

// Offset sentinels (§8): -1 is the stream start, now is the tail. A server never issues
// either as a real offset.
const (
	offsetStart = "-1"
	offsetNow   = "now"
)

// Cursor defaults (§10): the default cursor is the number of 20 s intervals since
// 2024-10-09T00:00:00Z.
const (
	cursorEpochUnix = 1728432000
	cursorInterval  = 20 * time.Second
)

// Media types the kit uses.
const (
	ctText        = "text/plain"
	ctJSON        = "application/json"
	ctOctets      = "application/octet-stream"
	ctEventStream = "text/event-stream"
)

// currentCursorInterval is the default cursor (§10) at t.
func currentCursorInterval(t time.Time) int64 {
	return int64(t.Sub(time.Unix(cursorEpochUnix, 0)) / cursorInterval)
}
