package httpd

import (
	"net/url"
	"strings"

	"github.com/dsd-project/dsd/model"
)

// targetKind says what resource a request path names (D1).
type targetKind uint8

const (
	tBucket      targetKind = iota // /{bucket}
	tBucketList                    // /{bucket}/streams
	tStream                        // {stream}
	tSnapshot                      // {stream}/snapshot
	tSnapshotAt                    // {stream}/snapshot/{offset}
	tRetention                     // {stream}/retention[/{offset}]
	tBootstrap                     // {stream}/bootstrap
	tAttrs                         // {stream}/attrs
	tAppendBatch                   // {stream}/append-batch
	tReserved                      // .../__ds/...: subscriptions
)

// subResource reports whether t names an extension sub-resource of a stream.
func (t target) subResource() bool { return t.kind > tStream && t.kind <= tAppendBatch }

// target is a parsed request path.
type target struct {
	kind   targetKind
	bucket string
	key    model.StreamKey
	flat   bool   // the /v1/stream/ compatibility surface
	path   string // the stream's own path as requested (escaped), for Location
	param  string // decoded {offset} of snapshot and retention paths ("" when absent);
	// for tReserved the escaped rest of the path after __ds/
}

// reservedSegment is the first path segment reserved for subscriptions (B-6-01, D1).
const reservedSegment = "__ds"

// flatPrefix is the compatibility surface's root (D1).
const flatPrefix = "/v1/stream/"

// parseTarget classifies an escaped request path. Errors: model.ErrRouteNotFound,
// model.ErrBadBucketID, model.ErrReservedBucketID (/__ds), model.ErrBadStreamID, model.ErrBadQuery (bad escapes).
func (h *Handler) parseTarget(escaped string) (target, error) {
	if h.cfg.CompatBucket != "" && strings.HasPrefix(escaped, flatPrefix) {
		return flatTarget(h.cfg.CompatBucket, escaped)
	}
	if !strings.HasPrefix(escaped, "/") || escaped == "/" {
		return target{}, model.ErrRouteNotFound
	}
	segs := strings.Split(escaped[1:], "/")
	bucket, err := url.PathUnescape(segs[0])
	if err != nil {
		return target{}, model.ErrBadPathEscape
	}
	if bucket == reservedSegment && len(segs) > 1 {
		return target{kind: tReserved, param: strings.Join(segs[1:], "/")}, nil
	}
	if err := model.CheckBucketID(bucket); err != nil {
		return target{}, err // /__ds itself: the reserved id, not a bucket (ErrReservedBucketID)
	}
	if len(segs) == 1 {
		return target{kind: tBucket, bucket: bucket}, nil
	}
	if len(segs) == 2 && segs[1] == model.ReservedStreamID {
		return target{kind: tBucketList, bucket: bucket}, nil
	}
	t, err := streamTarget(bucket, segs[1:])
	if err == nil {
		t.path = "/" + segs[0] + "/" + segs[1]
	}
	return t, err
}

// flatTarget parses the rest of a /v1/stream/ path: the whole of it is the stream name,
// segments percent-decoded and joined with '/' (D1 amended); no sub-resources. A first
// segment __ds is the reserved namespace. Errors: model.ErrBadStreamID (empty, '.', '..'
// segments, NUL, a decoded '/' inside a segment, over model.MaxFlatNameBytes),
// model.ErrBadQuery (bad escapes). escaped is the whole path, flatPrefix included.
func flatTarget(bucket, escaped string) (target, error) {
	rest := escaped[len(flatPrefix):]
	if !strings.ContainsAny(rest, "%/") && rest != reservedSegment {
		// One segment without escapes (the common name): it is the name as it stands.
		if err := model.CheckFlatName(rest); err != nil {
			return target{flat: true}, err
		}
		return target{kind: tStream, bucket: bucket, flat: true, path: escaped,
			key: model.StreamKey{Bucket: bucket, Stream: rest}}, nil
	}
	segs := strings.Split(rest, "/")
	if first, err := url.PathUnescape(segs[0]); err == nil && first == reservedSegment {
		return target{kind: tReserved, bucket: bucket, flat: true, param: strings.Join(segs[1:], "/")}, nil
	}
	parts := make([]string, len(segs))
	for i, seg := range segs {
		p, err := url.PathUnescape(seg)
		if err != nil {
			return target{flat: true}, model.ErrBadQuery
		}
		if strings.Contains(p, "/") {
			return target{flat: true}, model.ErrBadFlatName
		}
		parts[i] = p
	}
	name := strings.Join(parts, "/")
	if err := model.CheckFlatName(name); err != nil {
		return target{flat: true}, err
	}
	return target{kind: tStream, bucket: bucket, flat: true, path: escaped,
		key: model.StreamKey{Bucket: bucket, Stream: name}}, nil
}

// streamTarget parses "{stream}[/{sub}[/{param}]]" within a bucket.
func streamTarget(bucket string, segs []string) (target, error) {
	name, err := url.PathUnescape(segs[0])
	if err != nil {
		return target{}, model.ErrBadPathEscape
	}
	if name == reservedSegment {
		return target{kind: tReserved, bucket: bucket, param: strings.Join(segs[1:], "/")}, nil
	}
	if err := model.CheckStreamID(bucket, name); err != nil {
		return target{}, err
	}
	t := target{kind: tStream, bucket: bucket, key: model.StreamKey{Bucket: bucket, Stream: name}}
	switch sub := segs[1:]; {
	case len(sub) == 0:
	case len(sub) == 1 && sub[0] == "snapshot":
		t.kind = tSnapshot
	case len(sub) == 2 && sub[0] == "snapshot":
		t.kind = tSnapshotAt
	case (len(sub) == 1 || len(sub) == 2) && sub[0] == "retention":
		t.kind = tRetention
	case len(sub) == 1 && sub[0] == "bootstrap":
		t.kind = tBootstrap
	case len(sub) == 1 && sub[0] == "attrs":
		t.kind = tAttrs
	case len(sub) == 1 && sub[0] == "append-batch":
		t.kind = tAppendBatch
	default:
		return target{}, model.ErrRouteNotFound
	}
	if len(segs) == 3 {
		p, err := url.PathUnescape(segs[2])
		if err != nil {
			return target{}, model.ErrBadOffset
		}
		t.param = p
	}
	return t, nil
}
