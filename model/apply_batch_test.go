package model

import (
	"bytes"
	"testing"
)

func frames(payloads ...string) []byte {
	var b []byte
	for _, p := range payloads {
		b = AppendBatchFrame(b, []byte(p))
	}
	return b
}

// Each frame is its own append with its own acknowledgement, in order; a failed frame
// changes nothing and later frames still commit. Spec: extension §4, §4.3, §4.4.
func TestBatchFramesAreSeparateAppends(t *testing.T) {
	m := newMachine(t)
	m.want(create("application/json", ""), StatusCreated)
	res := m.want(AppendBatch{Stream: sk, ContentType: Str("application/json"),
		Body: frames(`[1,2]`, `{`, `[]`, `"x"`)}, StatusOK)
	want := []struct {
		status int
		err    error
		next   Offset
	}{{204, nil, 4}, {400, ErrInvalidJSON, 4}, {400, ErrEmptyJSONArray, 4}, {204, nil, 8}}
	if len(res.Acks) != len(want) {
		t.Fatalf("acks %+v", res.Acks)
	}
	for i, w := range want {
		a := res.Acks[i]
		if a.Status != w.status || ErrorCode(a.Err) != ErrorCode(w.err) || a.NextOffset != w.next || a.Closed {
			t.Fatalf("ack %d: %+v, want %+v", i, a, w)
		}
	}
	if got := m.readAll(); got != `[1,2,"x"]` {
		t.Fatalf("content %q", got)
	}
}

// On a closed stream every frame is refused with 409 and Stream-Closed; a missing
// stream fails the whole request. Spec: extension §4.3, D5.
func TestBatchOnClosedAndMissingStreams(t *testing.T) {
	m := newMachine(t)
	m.want(create("text/plain", "ab"), StatusCreated)
	m.want(closeOnly(), StatusNoContent)
	res := m.want(AppendBatch{Stream: sk, ContentType: Str("text/plain"), Body: frames("c", "d")}, StatusOK)
	for _, a := range res.Acks {
		if a.Status != 409 || ErrorCode(a.Err) != "STREAM_CLOSED" || !a.Closed || a.NextOffset != 2 {
			t.Fatalf("ack on a closed stream: %+v", a)
		}
	}
	gone := AppendBatch{Stream: StreamKey{Bucket: "test", Stream: "nope"}, ContentType: Str("text/plain"), Body: frames("c")}
	m.wantErr(gone, StatusNotFound, ErrStreamNotFound)
}

// The request is judged as a whole first: refused control headers, Content-Type,
// framing, then the frame count. Spec: extension §4.1, §4.2, D5.
func TestBatchWholeRequestErrors(t *testing.T) {
	m := newMachine(t)
	m.want(create("text/plain", ""), StatusCreated)
	b := AppendBatch{Stream: sk, ContentType: Str("text/plain"), Body: frames("a"), Closed: Str("false")}
	m.wantErr(b, StatusBadRequest, ErrBadBatch)
	b.Closed = nil
	b.ContentType = nil
	m.wantErr(b, StatusBadRequest, ErrMissingContentType)
	b.ContentType = Str("text")
	m.wantErr(b, StatusBadRequest, ErrBadContentType)
	b.ContentType = Str("text/plain")
	for _, body := range [][]byte{nil, {0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 2, 'a'}} {
		b.Body = body
		m.wantErr(b, StatusBadRequest, ErrBadBatch)
	}
	b.Body = bytes.Repeat(frames("a"), MaxBatchFrames+1)
	m.wantErr(b, StatusTooLarge, ErrTooLarge)
	b.Body = bytes.Repeat(frames("a"), MaxBatchFrames)
	if res := m.want(b, StatusOK); len(res.Acks) != MaxBatchFrames {
		t.Fatalf("%d acks", len(res.Acks))
	}
}
