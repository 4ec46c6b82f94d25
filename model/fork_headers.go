package model

import (
	"net/url"
	"strings"
)

// ParseForkSource reads Stream-Forked-From on the bucketed surface (B-4.2-01, A-23,
// D1): an absolute path (a leading "/", not "//", no query or fragment) naming a stream,
// "/{bucket_id}/{stream_id}" with each segment URL-escaped (extension §8) and valid
// (extension §1.1). Anything else (another resource, a sub-resource, a reserved or
// malformed id) is not a fork source.
func ParseForkSource(path string) (StreamKey, bool) {
	if !strings.HasPrefix(path, "/") || strings.HasPrefix(path, "//") || strings.ContainsAny(path, "?#") {
		return StreamKey{}, false
	}
	segs := strings.Split(path[1:], "/")
	if len(segs) != 2 {
		return StreamKey{}, false
	}
	bucket, err1 := url.PathUnescape(segs[0])
	name, err2 := url.PathUnescape(segs[1])
	k := StreamKey{Bucket: bucket, Stream: name}
	if err1 != nil || err2 != nil || !ValidBucketID(bucket) || name == "__ds" || CheckStreamID(bucket, name) != nil {
		return StreamKey{}, false
	}
	return k, true
}

// ParseSubOffset reads Stream-Fork-Sub-Offset: ^(0|[1-9][0-9]*)$ (B-4.2-03, B-4.2-13),
// at most 16 digits.
func ParseSubOffset(s string) (uint64, bool) {
	if s == "" || (len(s) > 1 && s[0] == '0') || len(s) > 16 {
		return 0, false
	}
	v, ok := parseDigits(s)
	return v, ok
}
