package model

import (
	"fmt"
	"time"
)

// GetAttrs is GET {stream}/attrs (extension §5.3).
type GetAttrs struct{ Stream StreamKey }

// PutAttrs is PUT {stream}/attrs (extension §5.4): Content-Type as sent and the body.
type PutAttrs struct {
	Stream      StreamKey
	ContentType *string
	Body        []byte
}

// Name implements Command.
func (c GetAttrs) Name() string { return "GET /" + c.Stream.String() + "/attrs" }

// Name implements Command.
func (c PutAttrs) Name() string {
	return fmt.Sprintf("PUT /%s/attrs ct=%s body=%q", c.Stream, show(c.ContentType), clip(c.Body))
}

// MaxAttrsRequestBytes is the largest PUT {stream}/attrs body dsd reads (four times the
// 16 KiB attribute limit, so that unknown fields and white space can be dropped); a
// larger body is 413 like any oversized request.
const MaxAttrsRequestBytes = 4 * MaxAttrsBytes

// getAttrs: GET {stream}/attrs (extension §5.3): 400 bad ids, 404 missing or expired
// else 200 with the stored object as application/json, "{}" when none is set.
// Reading attributes is not a read of the stream's content: the sliding TTL is not
// restarted (dsd's reading of A-14, which restarts it on GET {stream}).
func (s State) getAttrs(c GetAttrs, now time.Time) (State, Result) {
	if err := checkKey(c.Stream); err != nil {
		return s, fail(StatusBadRequest, err)
	}
	s, st, res := s.liveOrGone(c.Stream, now)
	if st == nil {
		return s, res
	}
	body := []byte("{}")
	if st.attrs != nil {
		body = append([]byte(nil), st.attrs...)
	}
	return s, Result{Status: StatusOK, ContentType: "application/json", Body: body}.advertise(st)
}

// putAttrs: PUT {stream}/attrs (extension §5.4), decided in this order:
//
//  1. 400 bad ids.
//  2. 400 MISSING_CONTENT_TYPE without Content-Type; 400 INVALID_ATTRS when it is not
//     application/json (media-type equal, A-10).
//  3. 413 for a body over MaxAttrsRequestBytes.
//  4. 400 INVALID_ATTRS unless NormalizeAttrs accepts the body (§5.1: a JSON object,
//     title a string, metadata an object, stored form at most 16 KiB).
//  5. 404 missing or expired stream.
//  6. 204: the object replaces the stored one; {} clears it (§5.4). Allowed after close;
//     nothing else changes: offsets, content, closure, snapshots, reads (§5), and the
//     sliding TTL is not restarted (CONFORMANCE.md "Attributes").
func (s State) putAttrs(c PutAttrs, now time.Time) (State, Result) {
	if err := checkKey(c.Stream); err != nil {
		return s, fail(StatusBadRequest, err)
	}
	if c.ContentType == nil || *c.ContentType == "" {
		return s, fail(StatusBadRequest, ErrMissingContentType)
	}
	if mt, err := MediaType(*c.ContentType); err != nil || !IsJSON(mt) {
		return s, fail(StatusBadRequest, ErrAttrsContentType)
	}
	if len(c.Body) > MaxAttrsRequestBytes {
		return s, fail(StatusTooLarge, ErrTooLarge)
	}
	attrs, err := NormalizeAttrs(c.Body)
	if err != nil {
		return s, fail(StatusBadRequest, err)
	}
	s, st, res := s.liveOrGone(c.Stream, now)
	if st == nil {
		return s, res
	}
	st = st.clone()
	st.attrs = attrs
	return s.withStream(c.Stream, st), Result{Status: StatusNoContent}.advertise(st)
}
