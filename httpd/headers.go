package httpd

import (
	"net/http"
	"strings"
)

// Protocol header names (B-13-02, extension spec).
const (
	hContentType         = "Content-Type"
	hTTL                 = "Stream-Ttl"
	hExpiresAt           = "Stream-Expires-At"
	hStreamSeq           = "Stream-Seq"
	hCursor              = "Stream-Cursor"
	hNextOffset          = "Stream-Next-Offset"
	hUpToDate            = "Stream-Up-To-Date"
	hStreamClosed        = "Stream-Closed"
	hForkedFrom          = "Stream-Forked-From"
	hForkOffset          = "Stream-Fork-Offset"
	hForkSubOffset       = "Stream-Fork-Sub-Offset"
	hProducerID          = "Producer-Id"
	hProducerEpoch       = "Producer-Epoch"
	hProducerSeq         = "Producer-Seq"
	hProducerExpectedSeq = "Producer-Expected-Seq"
	hProducerReceivedSeq = "Producer-Received-Seq"
	hSSEEncoding         = "Stream-Sse-Data-Encoding"
	hExtensions          = "Stream-Extensions"
	hRecordStart         = "Stream-Record-Start"
	hRecordNext          = "Stream-Record-Next"
	hRecordFirst         = "Stream-Record-First"
	hRecordMatch         = "Stream-Record-Match"
	hDataContentType     = "Stream-Data-Content-Type"
	hAttrs               = "Stream-Attrs"
	hSnapshotOffset      = "Stream-Snapshot-Offset"
	hSnapshotDigest      = "Stream-Snapshot-Digest"
	hSnapshotMatch       = "Stream-Snapshot-Match"
)

// extRecords is the token of the JSON record coordinates extension (extension §6).
const extRecords = "json-record-coordinates-v1"

// Cache-Control values.
const (
	ccPublic  = "public, max-age=60, stale-while-revalidate=300"
	ccPrivate = "private, max-age=60, stale-while-revalidate=300"
	ccNoCache = "no-cache"
	ccNoStore = "no-store"
)

// corsAllowHeaders is what a CORS preflight may request.
var corsAllowHeaders = strings.Join([]string{
	"Content-Type", "Authorization", "If-None-Match", "Stream-TTL", "Stream-Expires-At",
	"Stream-Seq", "Stream-Closed", "Stream-Forked-From", "Stream-Fork-Offset",
	"Stream-Fork-Sub-Offset", "Producer-Id", "Producer-Epoch", "Producer-Seq",
	"Stream-Record-Match", "Stream-Attrs", "Stream-Snapshot-Match", "Last-Event-ID",
}, ", ")

// corsExposeHeaders lists the response headers browsers may read.
var corsExposeHeaders = strings.Join([]string{
	"ETag", "Location", "Stream-Next-Offset", "Stream-Up-To-Date", "Stream-Closed",
	"Stream-Cursor", "Stream-TTL", "Stream-Expires-At", "Producer-Epoch", "Producer-Seq",
	"Producer-Expected-Seq", "Producer-Received-Seq", "Stream-SSE-Data-Encoding",
	"Stream-Extensions", "Stream-Record-Start", "Stream-Record-Next", "Stream-Record-First",
	"Stream-Data-Content-Type", "Stream-Snapshot-Offset", "Stream-Snapshot-Digest",
}, ", ")

// setCommonHeaders adds what every response carries (B-12.7-01, B-12.7-02, D7), and the
// CORS headers on every GET and HEAD (whose responses caches may share between
// browsers and other clients) and on every response to a request with an Origin.
func setCommonHeaders(h http.Header, r *http.Request) {
	h["X-Content-Type-Options"] = valNosniff
	h["Cross-Origin-Resource-Policy"] = valCrossOrigin
	if r.Method == http.MethodGet || r.Method == http.MethodHead || r.Header.Get("Origin") != "" {
		h["Access-Control-Allow-Origin"] = valAnyOrigin
		h["Access-Control-Expose-Headers"] = valExposeHeaders
	}
}

// The constant header values of every response, shared by all of them (a Set would
// allocate a slice per header per request). Each has cap 1, so an Add appends to a copy;
// nothing writes into a header's value slice in place.
var (
	valNosniff       = []string{"nosniff"}[:1:1]
	valCrossOrigin   = []string{"cross-origin"}[:1:1]
	valAnyOrigin     = []string{"*"}[:1:1]
	valExposeHeaders = []string{corsExposeHeaders}[:1:1]
)
