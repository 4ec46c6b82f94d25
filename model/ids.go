package model

import (
	"strings"
	"unicode/utf8"
)

// MaxStreamKeyBytes bounds the combined "{bucket_id}/{stream_id}" key (extension §1.1).
const MaxStreamKeyBytes = 122

// ReservedStreamID is the local stream id taken by the bucket listing endpoint (§1.1).
const ReservedStreamID = "streams"

// ValidBucketID reports whether id matches ^[a-z0-9_-]{4,64}$ (extension §1.1).
func ValidBucketID(id string) bool {
	if len(id) < 4 || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// CheckStreamID validates a decoded stream id within its bucket (extension §1.1): valid
// UTF-8, non-empty, no '/', NUL or "..", not the reserved "streams", and the key
// "{bucket}/{stream}" at most 122 bytes. Errors: ErrBadStreamID.
func CheckStreamID(bucket, stream string) error {
	switch {
	case stream == "", stream == ReservedStreamID, !utf8.ValidString(stream),
		strings.ContainsAny(stream, "/\x00"), strings.Contains(stream, ".."),
		len(bucket)+1+len(stream) > MaxStreamKeyBytes:
		return ErrBadStreamID
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
