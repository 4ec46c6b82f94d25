package engine

import (
	"time"

	"errors"
	"testing"

	"github.com/dsd-project/dsd/model"
)

func forkReq(src string, at *model.Offset, sub uint64) CreateRequest {
	return CreateRequest{Fork: &ForkRequest{Source: key(src), SourcePath: "/test/" + src, Offset: at, SubOffset: sub}}
}

// A fork reads the source's data before the fork point, then its own; later source
// appends stay invisible to it. Spec: B-4.2-01, B-4.2-02, B-4.2-18.
func TestForkInheritsPrefixOnly(t *testing.T) {
	te := newTestEngine(t)
	te.mustCreate("src", "text/plain", "abc")
	f, err := te.Create(key("f"), forkReq("src", nil, 0))
	if err != nil || f.Info.Tail != off(3) || f.Info.ContentType != "text/plain" {
		t.Fatalf("fork: %+v %v", f, err)
	}
	te.mustAppend("src", "text/plain", "SRC")
	te.mustAppend("f", "text/plain", "FORK")
	if got := string(te.readAll("f").Data); got != "abcFORK" {
		t.Fatalf("fork reads %q", got)
	}
	if got := string(te.readAll("src").Data); got != "abcSRC" {
		t.Fatalf("source reads %q", got)
	}
}

// Sub-offsets cut the unit at the anchor; beyond its end is 400. Spec: B-4.2-14, A-22.
func TestForkSubOffset(t *testing.T) {
	te := newTestEngine(t)
	te.mustCreate("s", "text/plain", "first")
	te.mustAppend("s", "text/plain", "second")
	at := off(5)
	if _, err := te.Create(key("f1"), forkReq("s", &at, 3)); err != nil {
		t.Fatal(err)
	}
	if got := string(te.readAll("f1").Data); got != "firstsec" {
		t.Fatalf("sub-offset fork reads %q", got)
	}
	if _, err := te.Create(key("f2"), forkReq("s", &at, 7)); !errors.Is(err, model.ErrBadForkRequest) {
		t.Fatalf("sub-offset past the unit: %v", err)
	}
	mid := off(2)
	if _, err := te.Create(key("f3"), forkReq("s", &mid, 0)); !errors.Is(err, model.ErrOffsetNotBoundary) {
		t.Fatalf("unaligned anchor: %v", err)
	}
}

// Deleting a forked source soft-deletes it (410, path taken); deleting the last fork
// frees it, up the chain. Spec: B-4.2-10, B-4.2-11.
func TestForkSoftDeleteAndCascade(t *testing.T) {
	te := newTestEngine(t)
	te.mustCreate("a", "text/plain", "A")
	if _, err := te.Create(key("b"), forkReq("a", nil, 0)); err != nil {
		t.Fatal(err)
	}
	te.mustAppend("b", "text/plain", "B")
	if _, err := te.Create(key("c"), forkReq("b", nil, 0)); err != nil {
		t.Fatal(err)
	}
	te.mustAppend("c", "text/plain", "C")
	for _, n := range []string{"a", "b"} {
		if err := te.Delete(key(n)); err != nil {
			t.Fatal(err)
		}
		if _, err := te.Head(key(n)); !errors.Is(err, model.ErrStreamGone) {
			t.Fatalf("head of soft-deleted %s: %v", n, err)
		}
	}
	if _, err := te.Create(key("a"), CreateRequest{}); !errors.Is(err, model.ErrStreamDeletedPut) {
		t.Fatalf("PUT on soft-deleted path: %v", err)
	}
	te.reopen()
	if got := string(te.readAll("c").Data); got != "ABC" {
		t.Fatalf("leaf reads %q", got)
	}
	if err := te.Delete(key("c")); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a", "b", "c"} {
		if _, err := te.Head(key(n)); !errors.Is(err, model.ErrStreamNotFound) {
			t.Fatalf("after cascade, head %s: %v", n, err)
		}
	}
}

// A fork of a stream whose retention advanced inherits the source's snapshot when it lies
// at or before the fork point, so the fork's /bootstrap covers its retained start; with
// no such snapshot the fork is refused (410). Spec: extension §3.4, B-4.2 (our choice).
func TestForkOfRetainedStream(t *testing.T) {
	te := newTestEngine(t)
	te.mustCreate("src", "text/plain", "aa")
	te.mustAppend("src", "text/plain", "bb")
	te.mustAppend("src", "text/plain", "cc")
	if _, err := publish(te, "src", 2, "", "S2"); err != nil {
		t.Fatal(err)
	}
	if _, err := te.SetRetention(key("src"), Position{Offset: 2}); err != nil {
		t.Fatal(err)
	}
	at := off(4)
	f, err := te.Create(key("f"), forkReq("src", &at, 0))
	if err != nil || f.Info.Snapshot == nil || f.Info.RetainedFrom != 2 {
		t.Fatalf("fork: %+v %v", f, err)
	}
	b, err := te.OpenBootstrap(key("f"))
	if err != nil {
		t.Fatal(err)
	}
	res, _ := b.Next(1 << 20)
	b.Close()
	if string(b.Body) != "S2" || string(res.Data) != "bb" {
		t.Fatalf("fork bootstrap: %q then %q", b.Body, res.Data)
	}
	if _, err := publish(te, "src", 4, "", "S4"); err != nil {
		t.Fatal(err)
	}
	early := off(2)
	if _, err := te.Create(key("g"), forkReq("src", &early, 0)); !errors.Is(err, model.ErrOffsetGone) {
		t.Fatalf("fork before the visible snapshot of a retained stream: %v", err)
	}
}

// Deleting a fork publishes its source's dropped reference: an expired source that no
// fork references any more answers 404 (deleted), not 410 (kept for forks). Spec:
// B-4.2-10, A-14, A-23.
func TestForkDeletePublishesSourceRefs(t *testing.T) {
	te := newTestEngine(t)
	ttl := uint64(10)
	if _, err := te.Create(key("src"), CreateRequest{ContentType: "text/plain", MediaType: "text/plain", TTL: &ttl, Body: []byte("s")}); err != nil {
		t.Fatal(err)
	}
	if _, err := te.Create(key("f"), forkReq("src", nil, 0)); err != nil {
		t.Fatal(err)
	}
	if err := te.Delete(key("f")); err != nil {
		t.Fatal(err)
	}
	te.clk.advance(11 * time.Second)
	if _, err := te.Head(key("src")); !errors.Is(err, model.ErrStreamNotFound) {
		t.Fatalf("head of an expired source without forks: %v", err)
	}
}
