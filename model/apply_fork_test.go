package model

import (
	"testing"
	"time"
)

func forkOfS(name string, off *string, sub string) CreateStream {
	c := CreateStream{Stream: StreamKey{Bucket: "test", Stream: name}, ForkedFrom: Str("/test/s"), ForkOffset: off}
	if sub != "" {
		c.ForkSubOffset = Str(sub)
	}
	return c
}

func readOf(m *machine, name string) string {
	m.t.Helper()
	return string(m.want(ReadStream{Stream: StreamKey{Bucket: "test", Stream: name}}, StatusOK).Body)
}

// A fork holds its source's content before the divergence point, then its own; a
// sub-offset takes part of the append unit at the anchor and is the fork's first unit.
// Spec: B-4.2-02, B-4.2-03, B-4.2-14, B-4.2-15, B-4.2-18, A-22.
func TestForkContent(t *testing.T) {
	m := newMachine(t)
	m.want(create("text/plain", "hello"), StatusCreated)
	m.want(post("text/plain", "world"), StatusNoContent)
	m.want(forkOfS("f1", Str(ZeroOffset.String()), "3"), StatusCreated)
	if got := readOf(m, "f1"); got != "hel" {
		t.Fatalf("sub-offset 3: %q", got)
	}
	m.wantErr(forkOfS("f2", Str(ZeroOffset.String()), "6"), StatusBadRequest, ErrBadForkRequest)
	m.wantErr(forkOfS("f2", Str(Offset(2).String()), ""), StatusBadRequest, ErrOffsetNotBoundary)
	m.wantErr(forkOfS("f2", Str(Offset(11).String()), ""), StatusBadRequest, ErrOffsetBeyondTail)
	m.wantErr(forkOfS("f2", Str(Offset(10).String()), "1"), StatusBadRequest, ErrBadForkRequest)
	m.wantErr(forkOfS("f2", nil, "1"), StatusBadRequest, ErrBadForkRequest)
	f := forkOfS("f2", Str(Offset(5).String()), "3")
	f.Body = []byte("XY")
	m.want(f, StatusCreated)
	m.want(post("text/plain", "!"), StatusNoContent) // the source's later append ...
	if got := readOf(m, "f2"); got != "helloworXY" {
		t.Fatalf("fork content: %q", got) // ... never appears on the fork
	}
	m.want(f, StatusOK) // the same request again
	f.ForkSubOffset = Str("2")
	m.wantErr(f, StatusConflict, ErrConfigMismatch)
	ct := forkOfS("f3", nil, "")
	ct.ContentType = Str("application/json")
	m.wantErr(ct, StatusConflict, ErrContentTypeMismatch)
	m.wantErr(CreateStream{Stream: StreamKey{Bucket: "test", Stream: "f3"}, ForkOffset: Str(ZeroOffset.String())},
		StatusBadRequest, ErrBadForkRequest)
}

// Deleting a referenced stream soft-deletes it: 410 on GET, HEAD, POST, DELETE, 409 on
// PUT, its data still readable through forks; deleting the last fork frees it, up the
// chain. Spec: B-4.2-10, B-4.2-11, B-4.2-19.
func TestSoftDeleteAndCascade(t *testing.T) {
	m := newMachine(t)
	m.want(create("text/plain", "A"), StatusCreated)
	m.want(forkOfS("b", nil, ""), StatusCreated)
	b := StreamKey{Bucket: "test", Stream: "b"}
	m.want(AppendStream{Stream: b, ContentType: Str("text/plain"), Body: []byte("B")}, StatusNoContent)
	c := CreateStream{Stream: StreamKey{Bucket: "test", Stream: "c"}, ForkedFrom: Str("/test/b")}
	m.want(c, StatusCreated)
	m.want(DeleteStream{Stream: sk}, StatusNoContent)
	m.wantErr(read("-1"), StatusGone, ErrStreamGone)
	m.wantErr(HeadStream{Stream: sk}, StatusGone, ErrStreamGone)
	m.wantErr(post("text/plain", "x"), StatusGone, ErrStreamGone)
	m.wantErr(DeleteStream{Stream: sk}, StatusGone, ErrStreamGone)
	m.wantErr(create("text/plain", ""), StatusConflict, ErrStreamDeletedPut)
	m.wantErr(forkOfS("d", nil, ""), StatusConflict, ErrForkSourceGone)
	m.want(DeleteStream{Stream: b}, StatusNoContent) // soft: c references it
	if got := readOf(m, "c"); got != "AB" {
		t.Fatalf("leaf of a chain with deleted links: %q", got)
	}
	if r := m.want(GetBucket{Bucket: "test"}, StatusOK); r.Bucket.Streams != 3 {
		t.Fatalf("soft-deleted streams hold their paths: %d streams", r.Bucket.Streams)
	}
	m.want(DeleteStream{Stream: c.Stream}, StatusNoContent) // frees b, then s
	m.wantErr(read("-1"), StatusNotFound, ErrStreamNotFound)
	m.want(create("text/plain", ""), StatusCreated)
}

// A fork without TTL or Expires-At takes its source's; one with its own keeps it; the
// source expiring while forked is soft-deleted. Spec: B-4.2-05, B-4.2-20, A-14, A-23.
func TestForkExpiry(t *testing.T) {
	m := newMachine(t)
	src := create("text/plain", "x")
	src.TTL = Str("5")
	m.want(src, StatusCreated)
	m.want(forkOfS("f", nil, ""), StatusCreated)
	own := forkOfS("g", nil, "")
	own.TTL = Str("100")
	m.want(own, StatusCreated)
	if r := m.want(HeadStream{Stream: StreamKey{Bucket: "test", Stream: "f"}}, StatusOK); r.TTL == nil || *r.TTL != 5 {
		t.Fatalf("inherited TTL: %v", r.TTL)
	}
	m.tick(6 * time.Second)
	m.wantErr(read("-1"), StatusGone, ErrStreamGone)
	m.wantErr(ReadStream{Stream: StreamKey{Bucket: "test", Stream: "f"}}, StatusNotFound, ErrStreamNotFound)
	if got := readOf(m, "g"); got != "x" {
		t.Fatalf("fork of an expired source: %q", got)
	}
	m.want(DeleteStream{Stream: StreamKey{Bucket: "test", Stream: "g"}}, StatusNoContent)
	m.wantErr(read("-1"), StatusNotFound, ErrStreamNotFound)
}

// A JSON fork's records continue its source's ordinals. Spec: extension §6.1,
// CONFORMANCE.md "Forks and the extensions".
func TestForkRecordOrdinals(t *testing.T) {
	m := newMachine(t)
	m.want(create("application/json", `[1,2,3]`), StatusCreated)
	f := forkOfS("f", Str(Offset(4).String()), "1")
	f.Body = []byte(`[9]`)
	r := m.want(f, StatusCreated)
	if *r.RecordStart != 2 || *r.RecordNext != 4 {
		t.Fatalf("fork record range %d..%d", *r.RecordStart, *r.RecordNext)
	}
	if got := readOf(m, "f"); got != "[1,2,3,9]" {
		t.Fatalf("fork content %q", got)
	}
}
