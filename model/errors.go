package model

import (
	"errors"
	"fmt"
)

// Error is a protocol error with a stable code (D7: SCREAMING_SNAKE, listed in
// CONFORMANCE.md). The sentinels below are *Error values compared with errors.Is; wrap one
// with fmt.Errorf("%w: detail", ErrX) to add detail. The HTTP status of each is decided in
// one place, httpd/errors.go.
type Error struct {
	Code string
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

func newErr(code, msg string) *Error { return &Error{Code: code, Msg: msg} }

// Detailed is a sentinel with a message that names the offending parameter and its
// allowed form; errors.Is(d, d.Base) holds, so its code and status are Base's.
type Detailed struct {
	Base *Error
	Msg  string
}

func (d *Detailed) Error() string { return d.Msg }
func (d *Detailed) Unwrap() error { return d.Base }

func detail(base *Error, msg string) *Detailed {
	d := &Detailed{Base: base, Msg: msg}
	AllDetails = append(AllDetails, d)
	return d
}

// AllDetails lists every detailed message, for CONFORMANCE.md's error table.
var AllDetails []*Detailed

// Detailed messages of the syntax errors (issue 18: name the parameter and its form).
var (
	ErrListLimit         = detail(ErrBadQuery, "limit must be 1..1000")
	ErrTimeoutMs         = detail(ErrBadQuery, "timeout_ms must be a decimal integer of milliseconds (clamped to 1..60000)")
	ErrBadPathEscape     = detail(ErrBadQuery, "a path segment has a malformed percent-escape")
	ErrBootstrapLive     = detail(ErrBadLive, "/bootstrap takes no live parameter")
	ErrAttrsContentType  = detail(ErrBadAttrs, "attrs need Content-Type: application/json")
	ErrRecordAlone       = detail(ErrBadRecord, "max_records and record_view need record= or tail_records=")
	ErrRecordExclusive   = detail(ErrBadRecord, "record= and tail_records= exclude each other, offset= and max_bytes=, and are sent once")
	ErrRecordValue       = detail(ErrBadRecord, "record must be now or an unsigned decimal integer")
	ErrTailRecordsValue  = detail(ErrBadRecord, "tail_records must be an unsigned decimal integer")
	ErrMaxRecordsValue   = detail(ErrBadRecord, "max_records must be 1..2147483648")
	ErrRecordViewValue   = detail(ErrBadRecord, "record_view must be envelope")
	ErrRecordMatchValue  = detail(ErrBadRecord, "Stream-Record-Match must be an unsigned decimal integer")
	ErrBoundaryTwice     = detail(ErrBadRecord, "name the boundary once: a {offset} path segment or one ?record=, not both")
	ErrBoundaryRecordVal = detail(ErrBadRecord, "?record= must be an unsigned decimal integer")
	ErrReservedBucketID  = detail(ErrBadBucketID, "bucket_id __ds is reserved for the subscription APIs (base protocol §6): choose another id")
)

// MalformedQuery is ErrBadQuery naming the query parameter that does not parse.
func MalformedQuery(name string) error {
	return &Detailed{Base: ErrBadQuery, Msg: fmt.Sprintf("query parameter %q is malformed: percent-escapes must be %%XX and pairs are separated by '&'", name)}
}

// Request syntax: returned by the parsers in this package and by the HTTP layer before
// anything is looked up. Nothing changes.
var (
	ErrBadOffset          = newErr("INVALID_OFFSET", "offset must be -1, now, or a token of the form 0000000000000000_0000000000000000")
	ErrBadTTL             = newErr("INVALID_TTL", "Stream-TTL must be a non-negative decimal integer without sign, leading zeros, fraction or exponent")
	ErrBadExpiresAt       = newErr("INVALID_EXPIRES_AT", "Stream-Expires-At must be an RFC 3339 timestamp in the future")
	ErrTTLAndExpiresAt    = newErr("TTL_AND_EXPIRES_AT", "Stream-TTL and Stream-Expires-At cannot be used together")
	ErrBadContentType     = newErr("INVALID_CONTENT_TYPE", "Content-Type must be a media type of the form type/subtype")
	ErrMissingContentType = newErr("MISSING_CONTENT_TYPE", "Content-Type is required on a request with a body")
	ErrEmptyBody          = newErr("EMPTY_BODY", "an append needs a body, or Stream-Closed: true to close the stream")
	ErrBadProducer        = newErr("INVALID_PRODUCER", "Producer-Id, Producer-Epoch and Producer-Seq must be sent together; epoch and seq are integers 0..2^53-1 and the id is non-empty")
	ErrBadStreamSeq       = newErr("INVALID_STREAM_SEQ", "Stream-Seq must not be empty")
	ErrInvalidJSON        = newErr("INVALID_JSON", "the body is not valid UTF-8 JSON")
	ErrEmptyJSONArray     = newErr("EMPTY_JSON_ARRAY", "an append of an empty JSON array creates no messages")
	ErrBadLive            = newErr("INVALID_LIVE_MODE", "live must be long-poll or sse")
	ErrLiveNeedsOffset    = newErr("OFFSET_REQUIRED", "live reads require an offset parameter")
	ErrBadQuery           = newErr("INVALID_QUERY", "a query parameter is malformed")
	ErrRepeatedHeader     = newErr("REPEATED_HEADER", "a single-valued protocol header was sent more than once")
	ErrBadBucketID        = newErr("INVALID_BUCKET_ID", "bucket_id must match ^[a-z0-9_-]{4,64}$")
	ErrBadStreamID        = newErr("INVALID_STREAM_ID", "stream_id must be UTF-8, at most 122 bytes (with its bucket), without '/', NUL or '..', and not '.' (clients rewrite dot segments)")
	ErrBadFlatName        = newErr("INVALID_STREAM_ID", "a /v1/stream/ name must be UTF-8 of at most 1024 bytes, '/'-separated segments that are not empty, '.' or '..', without NUL or an escaped '/', not starting with __ds")
	ErrBadForkRequest     = newErr("INVALID_FORK", "the fork headers are malformed")
	ErrBadAttrs           = newErr("INVALID_ATTRS", "stream attributes must be a JSON object of at most 16 KiB")
	ErrBadBatch           = newErr("INVALID_BATCH", "the append-batch body or headers are malformed")
	ErrBadRecord          = newErr("INVALID_RECORD_PARAMS", "record parameters are malformed or combined incorrectly")
	ErrBadSnapshot        = newErr("INVALID_SNAPSHOT", "the snapshot request is malformed")
	ErrTooLarge           = newErr("PAYLOAD_TOO_LARGE", "the request body exceeds the server's limit")
	ErrBadBody            = newErr("INVALID_BODY", "the request body could not be read to its end")
	ErrTooManyMessages    = newErr("TOO_MANY_MESSAGES", "the JSON body holds more messages than one request may append")
	ErrBucketReserved     = newErr("BUCKET_RESERVED", "the compatibility surface's bucket cannot be deleted")
	ErrUnauthorized       = newErr("UNAUTHORIZED", "a valid bearer token is required")
	ErrNotImplemented     = newErr("NOT_IMPLEMENTED", "this API is not implemented by this server")
	ErrRouteNotFound      = newErr("NOT_FOUND", "no such resource")
	ErrMethodNotAllowed   = newErr("METHOD_NOT_ALLOWED", "method not allowed on this resource")
	ErrBadContentEncoding = newErr("UNSUPPORTED_CONTENT_ENCODING", "the request body's Content-Encoding is not supported: send it unencoded (identity) or gzip")
	ErrMalformedRequest   = newErr("MALFORMED_REQUEST", "the request line or a header is not valid HTTP/1.1 (RFC 9112): METHOD /path HTTP/1.1, percent-escapes as % and two hex digits, header lines as Name: value")
	ErrHeaderTooLarge     = newErr("HEADERS_TOO_LARGE", "the request line and headers exceed the server's limit of 1 MiB")
	ErrBadTransferCoding  = newErr("UNSUPPORTED_TRANSFER_ENCODING", "Transfer-Encoding must be chunked, or absent")
	ErrForbidden          = newErr("FORBIDDEN", "the bearer token does not grant the scope this request needs")
)

// Offsets in reads, forks, snapshots and retention (B-5.6-02, A-15, D2).
var (
	ErrOffsetBeyondTail  = newErr("OFFSET_BEYOND_TAIL", "the offset is beyond the stream's tail")
	ErrOffsetNotBoundary = newErr("OFFSET_NOT_ALIGNED", "the offset is not a message boundary")
	ErrOffsetGone        = newErr("OFFSET_GONE", "the offset is before the stream's retained data")
)

// RetainedError is a read that starts before the retained start: an offset below it, or
// -1 once retention has advanced (D2 amendment). 410 OFFSET_GONE (it unwraps to
// ErrOffsetGone) with Stream-Next-Offset = Start, the earliest retained offset, so a client
// learns where /bootstrap or its read can resume (extension §3.4).
type RetainedError struct{ Start Offset }

func (e *RetainedError) Error() string {
	return "the offset is before the stream's retained data, which starts at " + e.Start.String() + "; read /bootstrap"
}
func (e *RetainedError) Unwrap() error { return ErrOffsetGone }

// Buckets (extension §1).
var (
	ErrBucketNotFound = newErr("BUCKET_NOT_FOUND", "bucket not found")
	ErrBucketExists   = newErr("BUCKET_EXISTS", "bucket already exists")
	ErrBucketNotEmpty = newErr("BUCKET_NOT_EMPTY", "bucket still holds streams; delete them first (a soft-deleted stream counts until the forks that read it are deleted, though listings omit it)")
)

// Stream lifecycle (B-5.1, B-5.4, B-4.2-10).
var (
	ErrStreamNotFound   = newErr("STREAM_NOT_FOUND", "stream not found")
	ErrStreamGone       = newErr("STREAM_GONE", "stream was deleted; its data lives on for forks")
	ErrStreamDeletedPut = newErr("STREAM_SOFT_DELETED", "a deleted stream still referenced by forks occupies this path")
	ErrConfigMismatch   = newErr("CONFIG_MISMATCH", "stream exists with a different configuration")
	ErrForkSourceGone   = newErr("FORK_SOURCE_DELETED", "the fork source was deleted")
	ErrForkSourceMiss   = newErr("FORK_SOURCE_NOT_FOUND", "the fork source does not exist")
)

// Appends (B-5.2, B-5.2.1, A-07).
var (
	ErrContentTypeMismatch = newErr("CONTENT_TYPE_MISMATCH", "Content-Type does not match the stream's")
	ErrStreamSeqConflict   = newErr("SEQ_CONFLICT", "Sequence conflict: Stream-Seq must be greater than the last one")
	ErrEpochSeqNotZero     = newErr("INVALID_PRODUCER_SEQ", "a new producer epoch must start at Producer-Seq 0")
)

// Extensions: snapshots, retention, attributes (extension §2, §5).
var (
	ErrSnapshotNotFound = newErr("SNAPSHOT_NOT_FOUND", "snapshot not found")
	ErrSnapshotConflict = newErr("SNAPSHOT_CONFLICT", "a different snapshot was published at this offset")
	ErrSnapshotPastTail = newErr("SNAPSHOT_BEYOND_TAIL", "the snapshot offset is beyond the stream's tail")
	ErrSnapshotMatch    = newErr("SNAPSHOT_MATCH_FAILED", "Stream-Snapshot-Match does not match the visible snapshot")
	ErrSnapshotLatest   = newErr("SNAPSHOT_IN_USE", "the latest snapshot cannot be deleted")
	ErrRetentionInvalid = newErr("RETENTION_CONFLICT", "retention cannot move backward or past the latest snapshot")
)

// Storage (D4).
var (
	ErrStorageFailed = newErr("STORAGE_FAILED", "storage failed; the server refuses writes until its storage works again")
	ErrShuttingDown  = newErr("SHUTTING_DOWN", "the server is shutting down")
)

// Server limits on request bodies (D5 limits; dsd's own bounds, CONFORMANCE.md).
var (
	ErrBusy        = newErr("SERVER_BUSY", "the server holds as many request bodies or live-read bytes as it allows; retry after Retry-After seconds")
	ErrBodyTimeout = newErr("BODY_TIMEOUT", "the request body stalled: no byte arrived within the server's body idle timeout")
)

// ClosedError is returned for an append to a closed stream (B-5.2-07, B-5.2-10): 409 with
// Stream-Closed: true and Stream-Next-Offset: Final.
type ClosedError struct{ Final Offset }

func (e *ClosedError) Error() string { return "stream is closed" }

// Code is the stable error code.
func (e *ClosedError) Code() string { return "STREAM_CLOSED" }

// StaleEpochError is returned when a producer's epoch is older than the server's
// (B-5.2.1-03): 403 with Producer-Epoch: Current.
type StaleEpochError struct{ Current uint64 }

func (e *StaleEpochError) Error() string {
	return fmt.Sprintf("producer epoch is stale; current epoch is %d", e.Current)
}

// Code is the stable error code.
func (e *StaleEpochError) Code() string { return "STALE_EPOCH" }

// SeqGapError is returned when a producer skips sequence numbers (B-5.2.1-03): 409 with
// Producer-Expected-Seq and Producer-Received-Seq.
type SeqGapError struct{ Expected, Received uint64 }

func (e *SeqGapError) Error() string {
	return fmt.Sprintf("producer sequence gap: expected %d, received %d", e.Expected, e.Received)
}

// Code is the stable error code.
func (e *SeqGapError) Code() string { return "PRODUCER_SEQ_GAP" }

// RecordMismatchError is returned when Stream-Record-Match differs from the record tail
// (extension §6.4): 412 with Stream-Record-Next and Stream-Next-Offset.
type RecordMismatchError struct {
	Next uint64
	Tail Offset
}

func (e *RecordMismatchError) Error() string {
	return fmt.Sprintf("record tail is %d", e.Next)
}

// Code is the stable error code.
func (e *RecordMismatchError) Code() string { return "RECORD_MISMATCH" }

// RecordRangeError is returned by record-aware reads outside [F, N] (extension §6.6):
// Gone (410) below F, else 400; both carry Stream-Record-First/Next.
type RecordRangeError struct {
	First, Next uint64
	Gone        bool
}

func (e *RecordRangeError) Error() string {
	if e.Gone {
		return fmt.Sprintf("record is before the first retained record %d", e.First)
	}
	return fmt.Sprintf("record is beyond the record tail %d", e.Next)
}

// Code is the stable error code.
func (e *RecordRangeError) Code() string {
	if e.Gone {
		return "RECORD_GONE"
	}
	return "RECORD_BEYOND_TAIL"
}

// Coded is implemented by the typed errors of this package (*Error carries its code as a
// field).
type Coded interface {
	error
	Code() string
}

// ErrorCode returns the stable code carried by err, or "" when err is not a protocol
// error.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	var c Coded
	if errors.As(err, &c) {
		return c.Code()
	}
	return ""
}

// AllErrors lists every sentinel and one value of every typed error, for the tests that
// keep httpd's status table complete.
var AllErrors = []error{
	ErrBadOffset, ErrBadTTL, ErrBadExpiresAt, ErrTTLAndExpiresAt, ErrBadContentType,
	ErrMissingContentType, ErrEmptyBody, ErrBadProducer, ErrBadStreamSeq, ErrInvalidJSON,
	ErrEmptyJSONArray, ErrBadLive, ErrLiveNeedsOffset, ErrBadQuery, ErrRepeatedHeader, ErrBadBucketID,
	ErrBadStreamID, ErrBadFlatName, ErrBadForkRequest, ErrBadAttrs, ErrBadBatch, ErrBadRecord, ErrBadSnapshot,
	ErrTooLarge, ErrBadBody, ErrTooManyMessages, ErrBucketReserved, ErrUnauthorized, ErrNotImplemented, ErrRouteNotFound, ErrMethodNotAllowed,
	ErrBadContentEncoding, ErrForbidden, ErrMalformedRequest, ErrHeaderTooLarge, ErrBadTransferCoding,
	ErrOffsetBeyondTail, ErrOffsetNotBoundary, ErrOffsetGone,
	ErrBucketNotFound, ErrBucketExists, ErrBucketNotEmpty,
	ErrStreamNotFound, ErrStreamGone, ErrStreamDeletedPut, ErrConfigMismatch, ErrForkSourceGone,
	ErrForkSourceMiss,
	ErrContentTypeMismatch, ErrStreamSeqConflict, ErrEpochSeqNotZero,
	ErrSnapshotNotFound, ErrSnapshotConflict, ErrSnapshotPastTail, ErrSnapshotMatch, ErrSnapshotLatest,
	ErrRetentionInvalid,
	ErrStorageFailed, ErrShuttingDown, ErrBusy, ErrBodyTimeout,
	ErrBadSubscription, ErrSubExists, ErrBadSubID,
	ErrSubFenced, ErrSubClaimed, ErrSubNoPendingWork, ErrSubAckOffset,
	&ClosedError{}, &StaleEpochError{}, &SeqGapError{}, &RecordMismatchError{},
	&RecordRangeError{}, &RecordRangeError{Gone: true},
}
