package model

import (
	"errors"
	"testing"
)

func publish(at, body string) PublishSnapshot {
	return PublishSnapshot{Stream: sk, Offset: Str(at), Body: []byte(body)}
}

func retain(at string) SetRetention { return SetRetention{Stream: sk, Offset: Str(at)} }

// A snapshot is published at a message boundary: past the tail 409, inside a message
// 400; the same content again is idempotent, other content at the same offset 409, and
// Stream-Snapshot-Match must name the visible snapshot. Spec: extension §2.2, D5.
func TestSnapshotPublishRules(t *testing.T) {
	m := newMachine(t)
	m.want(create("text/plain", "abc"), StatusCreated)
	m.want(post("text/plain", "de"), StatusNoContent)
	m.wantErr(publish(Offset(6).String(), "s"), StatusConflict, ErrSnapshotPastTail)
	m.wantErr(publish(Offset(1).String(), "s"), StatusBadRequest, ErrOffsetNotBoundary)
	m.wantErr(publish("-1", "s"), StatusBadRequest, ErrBadOffset)
	res := m.want(publish(Offset(3).String(), "s"), StatusNoContent)
	if res.Snapshot == nil || *res.Snapshot.Offset != 3 || res.Snapshot.Digest != SnapshotDigest(DefaultContentType, []byte("s")) {
		t.Fatalf("publish: %+v", res.Snapshot)
	}
	m.want(publish(Offset(3).String(), "s"), StatusNoContent)
	m.wantErr(publish(Offset(3).String(), "t"), StatusConflict, ErrSnapshotConflict)
	stale := publish(Offset(5).String(), "u")
	stale.Match = Str("sha256:00")
	m.wantErr(stale, StatusConflict, ErrSnapshotMatch)
	stale.Match = Str(res.Snapshot.Digest)
	m.want(stale, StatusNoContent)
	m.wantErr(GetSnapshot{Stream: sk, Offset: Str(Offset(3).String())}, StatusNotFound, ErrSnapshotNotFound)
	got := m.want(GetSnapshot{Stream: sk, Offset: Str(Offset(5).String())}, StatusOK)
	if string(got.Body) != "u" || !got.UpToDate || got.ContentType != DefaultContentType {
		t.Fatalf("snapshot read: %+v", got)
	}
	if r := m.want(GetSnapshot{Stream: sk}, StatusTemporaryRedirect); *r.SnapshotLocation != 5 {
		t.Fatalf("307 to %v", r.SnapshotLocation)
	}
}

// DELETE of the latest visible snapshot is 409 whether or not retention has advanced; a
// superseded or unknown offset is 404; neither changes anything. Spec: extension §2.6, D5.
func TestSnapshotDeleteRules(t *testing.T) {
	m := newMachine(t)
	m.want(create("text/plain", "ab"), StatusCreated)
	m.want(post("text/plain", "cd"), StatusNoContent)
	del := func(o Offset) DeleteSnapshot { return DeleteSnapshot{Stream: sk, Offset: o.String()} }
	m.wantErr(del(2), StatusNotFound, ErrSnapshotNotFound)
	m.want(publish(Offset(2).String(), "S"), StatusNoContent)
	m.wantErr(del(2), StatusConflict, ErrSnapshotLatest)
	m.want(publish(Offset(4).String(), "T"), StatusNoContent)
	m.wantErr(del(2), StatusNotFound, ErrSnapshotNotFound)
	m.wantErr(del(4), StatusConflict, ErrSnapshotLatest)
	if got := m.want(GetSnapshot{Stream: sk, Offset: Str(Offset(4).String())}, StatusOK); string(got.Body) != "T" {
		t.Fatalf("snapshot after refused deletes: %q", got.Body)
	}
}

// Retention moves only forward, to a boundary at or before the visible snapshot;
// afterwards older offsets and -1 are 410 naming the boundary, the snapshot cannot be
// deleted, and bootstrap is the snapshot and the messages after it. Spec: extension
// §2.2, §2.6, §3.2, §3.4.
func TestRetentionRules(t *testing.T) {
	m := newMachine(t)
	m.want(create("text/plain", "ab"), StatusCreated)
	m.want(post("text/plain", "cd"), StatusNoContent)
	m.want(post("text/plain", "ef"), StatusNoContent)
	m.want(retain(ZeroOffset.String()), StatusNoContent)
	m.wantErr(retain(Offset(2).String()), StatusConflict, ErrRetentionInvalid)
	m.want(publish(Offset(4).String(), "S"), StatusNoContent)
	m.wantErr(retain(Offset(6).String()), StatusConflict, ErrRetentionInvalid)
	m.wantErr(retain(Offset(7).String()), StatusConflict, ErrRetentionInvalid)
	m.wantErr(retain(Offset(3).String()), StatusBadRequest, ErrOffsetNotBoundary)
	m.want(retain(Offset(2).String()), StatusNoContent)
	m.wantErr(retain(ZeroOffset.String()), StatusConflict, ErrRetentionInvalid)
	var gone *RetainedError
	for _, o := range []string{ZeroOffset.String(), "-1"} {
		if res := m.wantErr(read(o), StatusGone, ErrOffsetGone); !errors.As(res.Err, &gone) || gone.Start != 2 {
			t.Fatalf("read from %s after retention: %v, want 410 naming the retained start (D2)", o, res.Err)
		}
	}
	if got := m.want(read(Offset(2).String()), StatusOK).Body; string(got) != "cdef" {
		t.Fatalf("read from the retained start: %q", got)
	}
	m.want(read("now"), StatusOK)
	m.wantErr(DeleteSnapshot{Stream: sk, Offset: Offset(4).String()}, StatusConflict, ErrSnapshotLatest)
	m.wantErr(publish(ZeroOffset.String(), "T"), StatusGone, ErrOffsetGone)
	b := m.want(Bootstrap{Stream: sk}, StatusOK)
	if len(b.Parts) != 2 || string(b.Parts[0].Body) != "S" || string(b.Parts[1].Body) != "ef" || *b.NextOffset != 6 {
		t.Fatalf("bootstrap: %+v", b)
	}
	m.wantErr(Bootstrap{Stream: sk, Live: Str("sse")}, StatusBadRequest, ErrBadLive)
}

// Without a snapshot, bootstrap starts with an empty application/octet-stream part and
// Stream-Snapshot-Offset -1; JSON messages are parts of their own, without "\n".
// Spec: extension §3.2, §6.10, D3.
func TestBootstrapWithoutSnapshot(t *testing.T) {
	m := newMachine(t)
	m.want(create("application/json", `[1,{"a" : 2}]`), StatusCreated)
	b := m.want(Bootstrap{Stream: sk}, StatusOK)
	want := []Part{{DefaultContentType, []byte{}}, {"application/json", []byte("1")}, {"application/json", []byte(`{"a":2}`)}}
	if len(b.Parts) != len(want) || b.Snapshot == nil || b.Snapshot.Offset != nil {
		t.Fatalf("bootstrap: %+v", b)
	}
	for i, p := range want {
		if b.Parts[i].ContentType != p.ContentType || string(b.Parts[i].Body) != string(p.Body) {
			t.Fatalf("part %d: %+v, want %+v", i, b.Parts[i], p)
		}
	}
	var rr *RecordRangeError
	res := m.do(SetRetention{Stream: sk, Record: Str("3")})
	if res.Status != StatusBadRequest || !errors.As(res.Err, &rr) || rr.Next != 2 {
		t.Fatalf("retention past N: %+v", res)
	}
}
