package model

import (
	"strings"
	"unicode/utf8"
)

// MaxStreamKeyBytes bounds the combined "{bucket_id}/{stream_id}" key (extension §1.1).
const MaxStreamKeyBytes = 122

// ReservedStreamID is the local stream id taken by the bucket listing endpoint (§1.1).
const ReservedStreamID = "streams"

// ValidBucketID reports whether id is a bucket id: CheckBucketID accepts it.
func ValidBucketID(id string) bool { return CheckBucketID(id) == nil }

// CheckBucketID validates a bucket id: it matches ^[a-z0-9_-]{4,64}$ (extension §1.1) and
// is not the reserved segment __ds, whose paths are the subscription APIs (B-6-01, D1).
// Errors: ErrBadBucketID, ErrReservedBucketID.
func CheckBucketID(id string) error {
	if len(id) < 4 || len(id) > 64 {
		return ErrBadBucketID
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return ErrBadBucketID
		}
	}
	if id == ReservedSegment {
		return ErrReservedBucketID
	}
	return nil
}

// CheckStreamID validates a decoded stream id within its bucket (extension §1.1): valid
// UTF-8, non-empty, no '/', NUL or "..", not the reserved "streams", and the key
// "{bucket}/{stream}" at most 122 bytes. dsd also refuses ".": clients and proxies remove
// that dot segment (RFC 3986 §5.2.4, %2E included), so /{bucket}/. would reach the bucket
// (the flat surface refuses it too, D1 amended). Errors: ErrBadStreamID.
func CheckStreamID(bucket, stream string) error {
	switch {
	case stream == "", stream == ".", stream == ReservedStreamID, !utf8.ValidString(stream),
		strings.ContainsAny(stream, "/\x00"), strings.Contains(stream, ".."),
		len(bucket)+1+len(stream) > MaxStreamKeyBytes:
		return ErrBadStreamID
	}
	return nil
}

// MaxFlatNameBytes bounds a stream name on the flat surface (D1 amended).
const MaxFlatNameBytes = 1024

// ReservedSegment is the first path segment reserved for subscriptions (B-6-01, D1).
const ReservedSegment = "__ds"

// CheckFlatName validates a decoded flat-surface stream name (D1 amended): valid UTF-8, at
// most 1,024 bytes, no NUL, '/'-separated segments that are neither empty nor "." nor "..",
// a first segment other than __ds, and not the reserved "streams" (the compat bucket's
// listing). Errors: ErrBadFlatName.
func CheckFlatName(name string) error {
	if name == "" || name == ReservedStreamID || len(name) > MaxFlatNameBytes ||
		!utf8.ValidString(name) || strings.IndexByte(name, 0) >= 0 {
		return ErrBadFlatName
	}
	i := 0
	for seg := range strings.SplitSeq(name, "/") { // no slice: this runs on every flat request
		if seg == "" || seg == "." || seg == ".." || (i == 0 && seg == ReservedSegment) {
			return ErrBadFlatName
		}
		i++
	}
	return nil
}

// StreamKey names a stream: its bucket and its bucket-local id.
type StreamKey struct {
	Bucket string
	Stream string
}

// String returns "{bucket}/{stream}", the stream's storage key.
func (k StreamKey) String() string { return k.Bucket + "/" + k.Stream }
