package model

import (
	"bytes"
	"time"
)

// createConfig is what a PUT {stream} asks for once its headers are parsed; it is the
// configuration an idempotent re-create is compared with (B-5.1-01, A-10).
type createConfig struct {
	contentType      string // as given; DefaultContentType when absent (B-5.1-03)
	mediaType        string
	contentTypeGiven bool // forks inherit the source's when absent (B-4.2-04)
	ttl              *uint64
	expiresAtMs      *int64
	closed           bool
	attrs            []byte // normalized Stream-Attrs; nil: none (extension §5.2)
	fork             *forkRequest
}

// parseCreate reads the create headers in the order the 400s are decided:
// Content-Type, TTL together with Expires-At (B-5.1-07), TTL (B-5.1-04, A-13),
// Expires-At (B-5.1-06, A-12), Stream-Closed (B-4.1-01, A-30), Stream-Attrs (extension
// §5.1, §5.2: normalized by NormalizeAttrs, 400 when invalid), the fork headers
// (parseFork). An empty Content-Type counts as absent.
func parseCreate(c CreateStream, now time.Time) (createConfig, error) {
	cfg := createConfig{contentType: DefaultContentType, mediaType: DefaultContentType}
	if c.ContentType != nil && *c.ContentType != "" {
		mt, err := MediaType(*c.ContentType)
		if err != nil {
			return cfg, ErrBadContentType
		}
		cfg.contentType, cfg.mediaType, cfg.contentTypeGiven = *c.ContentType, mt, true
	}
	if c.TTL != nil && c.ExpiresAt != nil {
		return cfg, ErrTTLAndExpiresAt
	}
	if c.TTL != nil {
		v, err := ParseTTL(*c.TTL)
		if err != nil {
			return cfg, err
		}
		cfg.ttl = &v
	}
	if c.ExpiresAt != nil {
		t, err := ParseExpiresAt(*c.ExpiresAt, now)
		if err != nil {
			return cfg, ErrBadExpiresAt
		}
		ms := t.UnixMilli()
		cfg.expiresAtMs = &ms
	}
	cfg.closed = c.Closed != nil && StreamClosedHeader(*c.Closed)
	if c.Attrs != nil {
		a, err := NormalizeAttrs([]byte(*c.Attrs))
		if err != nil {
			return cfg, err
		}
		cfg.attrs = a
	}
	f, err := parseFork(c)
	cfg.fork = f
	return cfg, err
}

// same reports whether an existing stream has the configuration a re-create asks for
// (B-5.1-01, B-5.1-02, B-5.1-14, A-10): normalized media type, TTL as a number,
// Expires-At as an instant, closure, and the attributes after normalization ({} and
// absent are equal, unknown fields are dropped, key order does not matter: extension
// §5.1, §5.2).
func (cfg createConfig) same(st *stream) bool {
	if cfg.fork != nil || st.fork != nil {
		return cfg.sameFork(st)
	}
	return cfg.mediaType == st.mediaType && cfg.closed == st.closed &&
		equalPtr(cfg.ttl, st.ttl) && equalPtr(cfg.expiresAtMs, st.expiresAtMs) &&
		bytes.Equal(cfg.attrs, st.attrs)
}

func equalPtr[T comparable](a, b *T) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// createStream: PUT {stream} (B-5.1).
//
//  1. 400 for bad ids and malformed headers (parseCreate).
//  2. 404 when the bucket does not exist: PUT never creates a bucket (X-1.2-02, X-1.6-02).
//  3. An existing live stream: 200 when the configuration matches, else 409 (B-5.1-01,
//     B-4.2-07). The body of a matching re-PUT is ignored and its TTL/expiry neither
//     restart nor alter the stream's. An expired stream counts as absent
//     a soft-deleted one occupies its path: 409 STREAM_SOFT_DELETED (B-4.2-10,
//     A fork request goes on in createFork.
//  4. Otherwise a new incarnation: a JSON body is flattened as on append, with
//     "[]" allowed (B-5.1-11, B-9.1-03); invalid JSON is 400. Stream-Closed: true
//     makes the body the complete content (B-5.1-09). 201 with Location (B-5.1-13).
//
// 200 and 201 carry the stored Content-Type, Stream-Next-Offset and Stream-Closed when
// closed (B-5.1-13); on a JSON stream Stream-Extensions and the range of the records the
// body created, [0, N) on 201 and the empty range at N on 200 (extension §6.3).
func (s State) createStream(c CreateStream, now time.Time) (State, Result) {
	if err := checkKey(c.Stream); err != nil {
		return s, fail(StatusBadRequest, err)
	}
	cfg, err := parseCreate(c, now)
	if err != nil {
		return s, fail(StatusBadRequest, err)
	}
	if !s.HasBucket(c.Stream.Bucket) {
		return s, fail(StatusNotFound, ErrBucketNotFound)
	}
	if st := s.streams[c.Stream]; st != nil {
		switch {
		case st.softDeleted:
			return s, fail(StatusConflict, ErrStreamDeletedPut)
		case !cfg.same(st):
			return s, fail(StatusConflict, ErrConfigMismatch)
		}
		n := st.recordNext()
		return s, createdResult(StatusOK, st).recordAck(st, n, n)
	}
	if cfg.fork != nil {
		return s.createFork(c, cfg, now)
	}
	var msgs [][]byte
	if len(c.Body) > 0 {
		var err error
		if msgs, err = bodyMessages(cfg.mediaType, c.Body); err != nil {
			return s, fail(StatusBadRequest, err)
		}
	}
	s.incarnations++
	ms := now.UnixMilli()
	st := &stream{incarnation: s.incarnations, contentType: cfg.contentType,
		mediaType: cfg.mediaType, ttl: cfg.ttl, expiresAtMs: cfg.expiresAtMs, accessMs: ms,
		closed: cfg.closed, attrs: cfg.attrs}
	if len(msgs) > 0 {
		st.appendUnit(msgs)
	}
	s = s.withStream(c.Stream, st)
	res := createdResult(StatusCreated, st).recordAck(st, 0, st.recordNext())
	res.Location = true
	return s, res
}

func createdResult(status int, st *stream) Result {
	return Result{Status: status, ContentType: st.contentType, NextOffset: offsetPtr(st.tail()),
		Closed: st.closed}
}

// canonicalMessages turns flattened JSON messages into their canonical bytes, each
// followed by "\n" (D3).
func canonicalMessages(flat [][]byte) [][]byte {
	out := make([][]byte, len(flat))
	for i, m := range flat {
		out[i] = CanonicalJSON([][]byte{m})
	}
	return out
}
