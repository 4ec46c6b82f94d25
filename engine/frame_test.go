package engine

import (
	"bytes"
	"testing"

	"github.com/dsd-project/dsd/engine/storage"
)

// A body sent with its frame (one spare byte in front) is stored in the frame, its flag
// written there; a frame that is not the body's is ignored and the body copied.
func TestAppendUnitMessagesUsesTheBodysFrame(t *testing.T) {
	frame := []byte("?hello")
	got := appendUnitMessages(nil, 7, frame[1:], frame, nil, false)
	if len(got) != 1 || got[0].Off != 7 || &got[0].Val[0] != &frame[0] {
		t.Fatalf("framed body: %+v, want the frame itself", got)
	}
	if got[0].Val[0] != storage.FlagUnitEnd || string(got[0].Val[1:]) != "hello" {
		t.Fatalf("framed message %q", got[0].Val)
	}
	other := []byte("!hello")
	body := []byte("hello")
	got = appendUnitMessages(nil, 7, body, other, nil, false)
	if &got[0].Val[0] == &other[0] || string(other) != "!hello" || string(got[0].Val[1:]) != "hello" {
		t.Fatalf("foreign frame used or written: %q, frame %q", got[0].Val, other)
	}
}

// An append with a frame reads back exactly its body.
// Spec: docs/spec/base-protocol.md B-5.2-09.
func TestAppendWithFrameReadsBackTheBody(t *testing.T) {
	te := newTestEngine(t)
	te.mustCreate("s", "text/plain", "ab")
	frame := []byte("_cde")
	if _, err := te.Append(key("s"), AppendRequest{MediaType: "text/plain", Body: frame[1:], Frame: frame}); err != nil {
		t.Fatal(err)
	}
	if res := te.readAll("s"); !bytes.Equal(res.Data, []byte("abcde")) {
		t.Fatalf("read %q, want abcde", res.Data)
	}
}
