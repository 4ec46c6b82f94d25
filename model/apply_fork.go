package model

import (
	"bytes"
	"fmt"
	"slices"
	"time"
)

// forkRequest is the fork part of a PUT once parsed (B-4.2-01..03).
type forkRequest struct {
	path   string    // Stream-Forked-From as sent: compared exactly on re-create
	source StreamKey // the stream it names
	offset *Offset   // Stream-Fork-Offset; nil: the source's tail (B-4.2-02)
	sub    uint64    // Stream-Fork-Sub-Offset; absent = 0 (B-4.2-03)
}

// forkOf is what a fork was created from (B-4.2): the source incarnation it references,
// and its request as sent, which a re-create is compared with (A-10: not the inherited
// values).
type forkOf struct {
	source            StreamKey
	sourceIncarnation uint64
	req               forkRequest
	anchor            Offset
	reqTTL            *uint64
	reqExpiresAtMs    *int64
}

// parseFork reads the fork headers after the other create headers (B-4.2-13, A-23):
// none of them without Stream-Forked-From (a Stream-Fork-Offset or -Sub-Offset alone is
// 400); a source that is not an absolute path to a stream of the same bucket
// (CONFORMANCE.md "Forks"); a Stream-Fork-Offset that is not an offset token (a
// sentinel included, A-23; surrounding white space is trimmed); a malformed sub-offset,
// or one above 0 without Stream-Fork-Offset (B-4.2-13). All are 400 INVALID_FORK.
func parseFork(c CreateStream) (*forkRequest, error) {
	if c.ForkedFrom == nil {
		if c.ForkOffset != nil || c.ForkSubOffset != nil {
			return nil, fmt.Errorf("%w: fork headers without Stream-Forked-From", ErrBadForkRequest)
		}
		return nil, nil
	}
	src, ok := ParseForkSource(*c.ForkedFrom)
	if !ok || src.Bucket != c.Stream.Bucket {
		return nil, fmt.Errorf("%w: Stream-Forked-From %q", ErrBadForkRequest, *c.ForkedFrom)
	}
	f := &forkRequest{path: *c.ForkedFrom, source: src}
	if c.ForkOffset != nil {
		o, err := ParseOffset(trimSpace(*c.ForkOffset))
		if err != nil {
			return nil, fmt.Errorf("%w: Stream-Fork-Offset %q", ErrBadForkRequest, *c.ForkOffset)
		}
		f.offset = &o
	}
	if c.ForkSubOffset != nil {
		n, ok := ParseSubOffset(*c.ForkSubOffset)
		if !ok || (n > 0 && c.ForkOffset == nil) {
			return nil, fmt.Errorf("%w: Stream-Fork-Sub-Offset %q", ErrBadForkRequest, *c.ForkSubOffset)
		}
		f.sub = n
	}
	return f, nil
}

func trimSpace(s string) string { return string(bytes.TrimSpace([]byte(s))) }

// sameFork compares a fork create request with the stream bound at its path (B-4.2-07,
// B-4.2-16, A-10): only a fork matches, with the same Stream-Forked-From string and
// sub-offset, the same Stream-Fork-Offset if the request sends one, the same media type
// if it sends Content-Type, and the same requested TTL or expiry, closure and
// attributes.
func (cfg createConfig) sameFork(st *stream) bool {
	f, r := st.fork, cfg.fork
	if f == nil || r == nil || f.req.path != r.path || f.req.sub != r.sub {
		return false
	}
	switch {
	case r.offset != nil && *r.offset != f.anchor,
		cfg.contentTypeGiven && cfg.mediaType != st.mediaType,
		cfg.closed != st.closed, !bytes.Equal(cfg.attrs, st.attrs):
		return false
	}
	return equalPtr(cfg.ttl, f.reqTTL) && equalPtr(cfg.expiresAtMs, f.reqExpiresAtMs)
}

// createFork creates the fork a PUT asks for (B-4.2), once its path is known to be free,
// deciding in this order:
//
//  1. The source: missing or expired 404 FORK_SOURCE_NOT_FOUND, soft-deleted 409
//     FORK_SOURCE_DELETED (B-4.2-06, A-23).
//  2. Content-Type: absent inherits the source's; another media type is 409 (B-4.2-04).
//  3. The divergence point (Stream-Fork-Offset, default the source's tail, B-4.2-02):
//     past the tail 400, below the source's retention boundary 410, not a message
//     boundary 400 (B-4.2-06, A-22). The source's visible snapshot at or before it is
//     inherited; with retention advanced and no such snapshot, 410 (CONFORMANCE.md
//     "Forks and the extensions": a fork's /bootstrap must cover its retained start).
//  4. The sub-offset (A-22, B-4.2-14): n bytes (JSON: n messages) of what remains of the
//     append unit that starts at the anchor; past that, or any n > 0 at the source's
//     tail, 400 INVALID_FORK.
//  5. A JSON body is flattened ("[]" allowed, B-5.1-11); invalid JSON 400.
//  6. 201 (B-5.1-13): the fork holds the source's content before the anchor, then the
//     materialized prefix as its first append unit, then the body as the next
//     (B-4.2-15). It shares the source's offsets and record ordinals (B-8-10,
//     CONFORMANCE.md), inherits the retention boundary and snapshot (step 3) but no
//     producer state, Stream-Seq or attributes (B-4.2-09; its own Stream-Attrs apply),
//     starts open unless it asks to be closed (B-4.2-08), and takes the source's TTL or
//     Expires-At when it asks for neither (B-4.2-05). The source is referenced from now
//     on. On a JSON stream the record range is [ordinal at the anchor, N) (§6.3).
func (s State) createFork(c CreateStream, cfg createConfig, now time.Time) (State, Result) {
	f := cfg.fork
	src := s.streams[f.source]
	switch {
	case src == nil:
		return s, fail(StatusNotFound, ErrForkSourceMiss)
	case src.softDeleted:
		return s, fail(StatusConflict, ErrForkSourceGone)
	case cfg.contentTypeGiven && cfg.mediaType != src.mediaType:
		return s, fail(StatusConflict, ErrContentTypeMismatch)
	}
	anchor := src.tail()
	if f.offset != nil {
		anchor = *f.offset
	}
	switch {
	case anchor > src.tail():
		return s, fail(StatusBadRequest, ErrOffsetBeyondTail)
	case anchor < src.retained:
		return s, fail(StatusGone, ErrOffsetGone)
	case !src.isBoundary(anchor):
		return s, fail(StatusBadRequest, ErrOffsetNotBoundary)
	}
	var snap *snapshot
	if src.snapshot != nil && src.snapshot.offset <= anchor {
		snap = src.snapshot
	} else if src.retained > 0 {
		return s, fail(StatusGone, fmt.Errorf("%w: no snapshot covers the retained start before the fork point", ErrOffsetGone))
	}
	prefix, err := src.forkPrefix(anchor, f.sub)
	if err != nil {
		return s, fail(StatusBadRequest, err)
	}
	var msgs [][]byte
	if len(c.Body) > 0 {
		if msgs, err = bodyMessages(src.mediaType, c.Body); err != nil {
			return s, fail(StatusBadRequest, err)
		}
	}
	ct, mt := src.contentType, src.mediaType
	if cfg.contentTypeGiven {
		ct, mt = cfg.contentType, cfg.mediaType
	}
	s.incarnations++
	st := &stream{incarnation: s.incarnations, contentType: ct, mediaType: mt, ttl: cfg.ttl,
		expiresAtMs: cfg.expiresAtMs, accessMs: now.UnixMilli(), closed: cfg.closed, attrs: cfg.attrs,
		retained: src.retained, snapshot: snap, data: slices.Clone(src.data[:anchor]),
		fork: &forkOf{source: f.source, sourceIncarnation: src.incarnation, req: *f, anchor: anchor,
			reqTTL: cfg.ttl, reqExpiresAtMs: cfg.expiresAtMs}}
	if cfg.ttl == nil && cfg.expiresAtMs == nil {
		st.ttl, st.expiresAtMs = src.ttl, src.expiresAtMs
	}
	for _, e := range src.msgEnds {
		if e <= uint64(anchor) {
			st.msgEnds = append(st.msgEnds, e)
		}
	}
	for _, e := range src.unitEnds {
		if e < uint64(anchor) {
			st.unitEnds = append(st.unitEnds, e)
		}
	}
	if anchor > 0 {
		st.unitEnds = append(st.unitEnds, uint64(anchor)) // the fork's own data starts a unit
	}
	first := st.recordNext()
	st.appendUnit(prefix)
	st.appendUnit(msgs)
	s = s.withStream(c.Stream, st)
	res := createdResult(StatusCreated, st).recordAck(st, first, st.recordNext())
	res.Location = true
	return s, res
}

// forkPrefix materializes a sub-offset of n at anchor (A-22, B-4.2-14): the first n
// bytes of the message at anchor (non-JSON streams: a message is an append unit), or
// the first n messages of what remains of the JSON append unit holding anchor; as the
// messages of one unit. Errors: ErrBadForkRequest past that limit or at the tail.
func (st *stream) forkPrefix(anchor Offset, n uint64) ([][]byte, error) {
	if n == 0 {
		return nil, nil
	}
	if anchor >= st.tail() {
		return nil, fmt.Errorf("%w: a sub-offset at the source's tail", ErrBadForkRequest)
	}
	i, _ := slices.BinarySearch(st.unitEnds, uint64(anchor)+1)
	unitEnd, o := st.unitEnds[i], uint64(anchor)
	var rest [][]byte // what remains of the unit from anchor
	for _, m := range st.messagesFrom(anchor) {
		if o >= unitEnd {
			break
		}
		rest = append(rest, m)
		o += uint64(len(m))
	}
	if !st.isJSON() {
		if uint64(len(rest[0])) < n {
			return nil, fmt.Errorf("%w: a sub-offset past the append unit", ErrBadForkRequest)
		}
		return [][]byte{rest[0][:n:n]}, nil
	}
	if uint64(len(rest)) < n {
		return nil, fmt.Errorf("%w: a sub-offset past the append unit", ErrBadForkRequest)
	}
	return rest[:n:n], nil
}

// bodyMessages turns a create body into its messages (B-5.1-11, B-9.1-03, D3).
func bodyMessages(mediaType string, body []byte) ([][]byte, error) {
	if !IsJSON(mediaType) {
		return [][]byte{body}, nil
	}
	flat, err := FlattenJSON(body, true)
	if err != nil {
		return nil, err
	}
	return canonicalMessages(flat), nil
}
