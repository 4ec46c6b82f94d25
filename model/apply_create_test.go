package model

import (
	"strings"
	"testing"
	"time"
)

// A repeat PUT with matching configuration answers 200 and one with a different
// configuration 409; media types compare case-insensitively and TTLs as numbers.
// Spec: B-5.1-01, B-5.1-14.
func TestRecreateWithSameConfigIs200AndDifferentIs409(t *testing.T) {
	m := newMachine(t)
	c := create("application/json", "")
	c.TTL = Str("60")
	res := m.want(c, StatusCreated)
	if !res.Location || res.ContentType != "application/json" || next(res) != ZeroOffset.String() {
		t.Fatalf("201: %+v", res)
	}
	c.ContentType = Str("APPLICATION/JSON")
	if res := m.want(c, StatusOK); res.ContentType != "application/json" || res.Location {
		t.Fatalf("200 must echo the stored type and carry no Location: %+v", res)
	}
	c.TTL = Str("61")
	m.wantErr(c, StatusConflict, ErrConfigMismatch)
	c.TTL = nil
	m.wantErr(c, StatusConflict, ErrConfigMismatch)
}

// Closure is part of the configuration a re-create is compared with.
// Spec: B-5.1-02, A-29.
func TestRecreateComparesClosure(t *testing.T) {
	m := newMachine(t)
	m.want(create("text/plain", "x"), StatusCreated)
	closed := create("text/plain", "ignored")
	closed.Closed = Str("true")
	m.wantErr(closed, StatusConflict, ErrConfigMismatch)
	m.want(create("text/plain", ""), StatusOK)
	m.want(closeOnly(), StatusNoContent)
	m.wantErr(create("text/plain", ""), StatusConflict, ErrConfigMismatch)
	if res := m.want(closed, StatusOK); !res.Closed || next(res) != Offset(1).String() {
		t.Fatalf("re-PUT of a closed stream: %+v", res)
	}
	if got := m.readAll(); got != "x" {
		t.Fatalf("the body of a 200 re-PUT must be ignored: %q", got)
	}
}

// A missing Content-Type defaults to application/octet-stream, which a later re-PUT
// without Content-Type matches. Spec: B-5.1-03, A-10.
func TestCreateWithoutContentTypeDefaultsToOctetStream(t *testing.T) {
	m := newMachine(t)
	if res := m.want(create("", ""), StatusCreated); res.ContentType != DefaultContentType {
		t.Fatalf("content type %q", res.ContentType)
	}
	m.want(create("", ""), StatusOK)
	m.want(create("application/octet-stream", ""), StatusOK)
	m.wantErr(create("text/plain", ""), StatusConflict, ErrConfigMismatch)
}

// Stream-TTL is a non-negative decimal integer with no leading zero, sign, fraction or
// exponent. Spec: B-5.1-04, A-13.
func TestCreateRejectsMalformedTTL(t *testing.T) {
	for _, v := range []string{"abc", "-1", "00060", "+60", "60.5", "1e3", "", "9007199254740992"} {
		m := newMachine(t)
		c := create("text/plain", "")
		c.TTL = Str(v)
		m.wantErr(c, StatusBadRequest, ErrBadTTL)
	}
	m := newMachine(t)
	c := create("text/plain", "")
	c.TTL = Str("0")
	m.want(c, StatusCreated)
}

// TTL and Expires-At together are 400; an Expires-At that is not RFC 3339 or not in the
// future is 400. Spec: B-5.1-06, B-5.1-07, A-12.
func TestCreateRejectsBadExpiry(t *testing.T) {
	m := newMachine(t)
	c := create("text/plain", "")
	c.TTL, c.ExpiresAt = Str("60"), Str(t0.Add(time.Hour).Format(time.RFC3339))
	m.wantErr(c, StatusBadRequest, ErrTTLAndExpiresAt)
	c.TTL = nil
	for _, v := range []string{"not-a-timestamp", t0.Add(-time.Second).Format(time.RFC3339), t0.Format(time.RFC3339)} {
		c.ExpiresAt = Str(v)
		m.wantErr(c, StatusBadRequest, ErrBadExpiresAt)
	}
	c.ExpiresAt = Str(t0.Add(time.Hour).In(time.FixedZone("x", 3600)).Format("2006-01-02T15:04:05.000-07:00"))
	m.want(c, StatusCreated)
	res := m.want(HeadStream{Stream: sk}, StatusOK)
	if res.ExpiresAt == nil || !res.ExpiresAt.Equal(t0.Add(time.Hour)) || res.ExpiresAt.Location() != time.UTC {
		t.Fatalf("HEAD Expires-At %v", res.ExpiresAt)
	}
}

// PUT on a stream of a bucket that does not exist is 404 and creates neither.
// Spec: X-1.2-02, X-1.6-02.
func TestCreateNeverCreatesABucket(t *testing.T) {
	m := newMachine(t)
	c := create("text/plain", "")
	c.Stream.Bucket = "nope"
	m.wantErr(c, StatusNotFound, ErrBucketNotFound)
	if m.s.HasBucket("nope") {
		t.Fatal("bucket created implicitly")
	}
}

// A JSON create body is flattened like an append, "[]" creating an empty stream, and
// invalid JSON is 400. Spec: B-5.1-11, B-9.1-03, A-21.
func TestCreateJSONBodyIsFlattened(t *testing.T) {
	m := newMachine(t)
	m.wantErr(create("application/json", "{"), StatusBadRequest, ErrInvalidJSON)
	if res := m.want(create("application/json", "[]"), StatusCreated); next(res) != ZeroOffset.String() {
		t.Fatalf("[] must create an empty stream: %s", next(res))
	}
	if got := m.readAll(); got != "[]" {
		t.Fatalf("read %q", got)
	}
	m.want(DeleteStream{Stream: sk}, StatusNoContent)
	m.want(create("application/json", `[{"a": 1}, [2, 3]]`), StatusCreated)
	if got := m.readAll(); got != `[{"a":1},[2,3]]` {
		t.Fatalf("read %q", got)
	}
}

// Bad bucket or stream ids are 400 before anything else. Spec: X-1.1-01, X-1.1-05,
// X-1.1-06, X-1.1-07.
func TestCreateRejectsBadIDs(t *testing.T) {
	m := newMachine(t)
	for _, key := range []StreamKey{{"TEST", "s"}, {"abc", "s"}, {"test", ""}, {"test", "a/b"},
		{"test", "a..b"}, {"test", "streams"}, {"test", strings.Repeat("a", 118)}} {
		c := create("text/plain", "")
		c.Stream = key
		m.want(c, StatusBadRequest)
	}
}

// After DELETE, PUT creates a new incarnation with no old data or producer state; the
// same holds after expiry. Spec: B-4-03, A-28.
func TestRecreateAfterDeleteStartsAfresh(t *testing.T) {
	m := newMachine(t)
	m.want(create("text/plain", "old"), StatusCreated)
	m.want(post("text/plain", "a").withProducer("p", "0", "0"), StatusOK)
	inc, _ := m.s.Stream(sk, m.now)
	m.want(DeleteStream{Stream: sk}, StatusNoContent)
	m.wantErr(read("-1"), StatusNotFound, ErrStreamNotFound)
	m.wantErr(DeleteStream{Stream: sk}, StatusNotFound, ErrStreamNotFound)
	m.want(create("text/plain", ""), StatusCreated)
	v, _ := m.s.Stream(sk, m.now)
	if v.Incarnation == inc.Incarnation || v.Tail != 0 {
		t.Fatalf("new incarnation %+v after %+v", v, inc)
	}
	m.want(post("text/plain", "a").withProducer("p", "0", "0"), StatusOK)
}
