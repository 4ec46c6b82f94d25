package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/dsd-project/dsd/model"
	"github.com/dsd-project/dsd/subs"
)

func pullConfig(t *testing.T, body string) SubscriptionCreate {
	t.Helper()
	c, err := model.ParseSubscription([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return SubscriptionCreate{Config: c, CallbackURL: "http://x/cb", JWKSURL: "http://x/jwks"}
}

func linkOf(t *testing.T, te *testEngine, k subs.Key, path string) subs.Link {
	t.Helper()
	links, err := te.Links(context.Background(), k)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range links {
		if l.Path == path {
			return l
		}
	}
	t.Fatalf("no link %q in %+v", path, links)
	return subs.Link{}
}

// Create links existing matches at their tails (no replay) and explicit streams; a
// repeated PUT is 200, a different one 409; streams created later are pending from their
// start; everything survives a reopen. Spec: B-6-03, B-6-05, B-6-07 (base protocol §6).
func TestSubscriptionLifecycle(t *testing.T) {
	te := newTestEngine(t)
	te.mustCreate("events/old", "text/plain", "abc")
	te.mustCreate("wake/pool", "application/json", "[]")
	k := subs.Key{Bucket: "test", ID: "s1"}
	c := pullConfig(t, `{"type":"pull-wake","wake_stream":"wake/pool","pattern":"events/*","streams":["manual/a"]}`)
	doc, created, err := te.PutSubscription(k, c)
	if err != nil || !created || len(doc.Links) != 2 {
		t.Fatalf("put: %+v %v %v", doc, created, err)
	}
	if l := linkOf(t, te, k, "events/old"); l.Acked != 3 || l.Tail != 3 || l.LinkType != subs.LinkGlob {
		t.Fatalf("backfilled link %+v", l)
	}
	if _, created, err := te.PutSubscription(k, c); err != nil || created {
		t.Fatalf("identical put: %v %v", created, err)
	}
	other := pullConfig(t, `{"type":"pull-wake","wake_stream":"wake/pool","pattern":"events/*","description":"x"}`)
	if _, _, err := te.PutSubscription(k, other); !errors.Is(err, model.ErrSubExists) {
		t.Fatalf("different put: %v", err)
	}
	te.mustCreate("events/new", "text/plain", "hello")
	if l := linkOf(t, te, k, "events/new"); l.Acked != 0 || l.Tail != 5 {
		t.Fatalf("new stream link %+v", l)
	}
	s, err := te.Subscription(context.Background(), k)
	if err != nil {
		t.Fatal(err)
	}
	st := s.State
	st.Generation = 1
	if err := te.Commit(context.Background(), subs.Change{Key: k, Incarnation: s.Incarnation, State: st,
		Acks: []subs.AckMove{{Path: "events/new", Offset: 5}}}); err != nil {
		t.Fatal(err)
	}
	if err := te.AddSubscriptionStreams(k, []string{"manual/b", "events/old"}); err != nil {
		t.Fatal(err)
	}
	if err := te.RemoveSubscriptionStream(k, "events/old"); err != nil {
		t.Fatal(err)
	}
	te.reopen()
	if l := linkOf(t, te, k, "events/new"); l.Acked != 5 {
		t.Fatalf("ack lost on reopen: %+v", l)
	}
	if l := linkOf(t, te, k, "events/old"); l.LinkType != subs.LinkGlob || l.Acked != 3 {
		t.Fatalf("removing the explicit link keeps the glob link: %+v", l)
	}
	if l := linkOf(t, te, k, "manual/b"); l.LinkType != subs.LinkExplicit || l.Tail != 0 {
		t.Fatalf("explicit link to an absent stream %+v", l)
	}
	s2, _ := te.Subscription(context.Background(), k)
	if s2.State.Generation != 1 || s2.Incarnation != s.Incarnation {
		t.Fatalf("state after reopen %+v", s2)
	}
	// Deleting tombstones: nothing found, a stale commit is refused, a re-create continues
	// the generation under a new incarnation.
	if err := te.DeleteSubscription(k); err != nil {
		t.Fatal(err)
	}
	if _, err := te.SubscriptionDocument(k); !errors.Is(err, subs.ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
	if err := te.Commit(context.Background(), subs.Change{Key: k, Incarnation: s.Incarnation, State: st}); !errors.Is(err, subs.ErrNotFound) {
		t.Fatalf("commit after delete: %v", err)
	}
	if _, created, err := te.PutSubscription(k, other); err != nil || !created {
		t.Fatalf("re-create: %v %v", created, err)
	}
	s3, _ := te.Subscription(context.Background(), k)
	if s3.State.Generation != 1 || s3.Incarnation == s.Incarnation {
		t.Fatalf("re-created %+v", s3)
	}
}

// A pull-wake event is appended in the transaction of its decision; a missing or closed
// wake stream writes neither. Spec: B-7-05 (base protocol §7.2), D10.
func TestSubscriptionWakeEventCommit(t *testing.T) {
	te := newTestEngine(t)
	te.mustCreate("wake/pool", "application/json", "[]")
	k := subs.Key{Bucket: "test", ID: "p"}
	if _, _, err := te.PutSubscription(k, pullConfig(t, `{"type":"pull-wake","wake_stream":"wake/pool","pattern":"e/*"}`)); err != nil {
		t.Fatal(err)
	}
	s, _ := te.Subscription(context.Background(), k)
	st := s.State
	st.Generation = 7
	ev := &subs.WakeEvent{Stream: "wake/pool", Body: []byte(`{"type":"wake","generation":7}`)}
	if err := te.Commit(context.Background(), subs.Change{Key: k, Incarnation: s.Incarnation, State: st, Event: ev}); err != nil {
		t.Fatal(err)
	}
	if got := string(te.readAll("wake/pool").Data); !strings.Contains(got, `{"type":"wake","generation":7}`) {
		t.Fatalf("wake stream %q", got)
	}
	st.Generation = 8
	ev.Stream = "wake/missing"
	if err := te.Commit(context.Background(), subs.Change{Key: k, Incarnation: s.Incarnation, State: st, Event: ev}); !errors.Is(err, subs.ErrWakeStream) {
		t.Fatalf("missing wake stream: %v", err)
	}
	if s, _ := te.Subscription(context.Background(), k); s.State.Generation != 7 {
		t.Fatalf("a refused event committed the state: %+v", s.State)
	}
}

// Keys survive a reopen; the observer hears of committed stream changes.
func TestSubscriptionKeysAndObserver(t *testing.T) {
	te := newTestEngine(t)
	keys := subs.Keys{TokenKey: []byte("0123456789abcdef0123456789abcdef"),
		Signing: []subs.SigningKey{{Seed: make([]byte, 32), Created: time.Unix(1, 0).UTC()}}}
	if err := te.SaveKeys(context.Background(), keys); err != nil {
		t.Fatal(err)
	}
	te.reopen()
	got, err := te.LoadKeys(context.Background())
	if err != nil || string(got.TokenKey) != string(keys.TokenKey) || len(got.Signing) != 1 {
		t.Fatalf("keys after reopen: %+v %v", got, err)
	}
	seen := make(chan string, 4)
	te.SetStreamObserver(func(b, s string) { seen <- b + "|" + s })
	te.mustCreate("a/b", "text/plain", "x")
	if v := <-seen; v != "test|a/b" {
		t.Fatalf("observer got %q", v)
	}
}

// Deleting a bucket removes its subscriptions in the same transaction (D10).
func TestDeleteBucketRemovesSubscriptions(t *testing.T) {
	te := newTestEngine(t)
	if _, err := te.CreateBucket("gone"); err != nil {
		t.Fatal(err)
	}
	k := subs.Key{Bucket: "gone", ID: "s"}
	if _, _, err := te.PutSubscription(k, pullConfig(t, `{"type":"pull-wake","wake_stream":"w","streams":["a"]}`)); err != nil {
		t.Fatal(err)
	}
	keep := subs.Key{Bucket: "test", ID: "s"}
	if _, _, err := te.PutSubscription(keep, pullConfig(t, `{"type":"pull-wake","wake_stream":"w","streams":["a"]}`)); err != nil {
		t.Fatal(err)
	}
	if err := te.DeleteBucket("gone"); err != nil {
		t.Fatal(err)
	}
	all, err := te.Subscriptions(context.Background())
	if err != nil || len(all) != 1 || all[0].Key != keep {
		t.Fatalf("after the bucket's deletion: %+v %v", all, err)
	}
}

// A failed commit moves nothing: neither the wake state nor the cursor nor the wake event
// (they are one transaction), and the caller gets ErrStorageFailed. Spec: D4, D10.
func TestSubscriptionCommitFailureMovesNothing(t *testing.T) {
	te := newTestEngine(t)
	te.mustCreate("wake/pool", "application/json", "[]")
	te.mustCreate("jobs/a", "text/plain", "abc")
	k := subs.Key{Bucket: "test", ID: "f"}
	if _, _, err := te.PutSubscription(k, pullConfig(t, `{"type":"pull-wake","wake_stream":"wake/pool","streams":["jobs/a"]}`)); err != nil {
		t.Fatal(err)
	}
	te.mustAppend("jobs/a", "text/plain", "de")
	s, _ := te.Subscription(context.Background(), k)
	st := s.State
	st.Generation = 1
	te.setFault(errors.New("disk on fire"))
	err := te.Commit(context.Background(), subs.Change{Key: k, Incarnation: s.Incarnation, State: st,
		Acks:  []subs.AckMove{{Path: "jobs/a", Offset: 5}},
		Event: &subs.WakeEvent{Stream: "wake/pool", Body: []byte(`{"type":"wake"}`)}})
	if !errors.Is(err, model.ErrStorageFailed) {
		t.Fatalf("commit during a storage failure: %v", err)
	}
	te.setFault(nil)
	te.reopen()
	s2, _ := te.Subscription(context.Background(), k)
	if s2.State.Generation != 0 || linkOf(t, te, k, "jobs/a").Acked != 3 {
		t.Fatalf("a failed commit left state %+v, link %+v", s2.State, linkOf(t, te, k, "jobs/a"))
	}
	if got := string(te.readAll("wake/pool").Data); strings.Contains(got, "wake") {
		t.Fatalf("a failed commit left a wake event: %q", got)
	}
}

// Derived links: a fork that starts matching counts from its fork point (inherited data
// is not new to it); a deleted and re-created stream starts afresh, its old cursor
// ignored. Spec: B-6-05 (base protocol §6.2), A-28, D10.
func TestSubscriptionLinksAcrossForksAndRecreation(t *testing.T) {
	te := newTestEngine(t)
	te.mustCreate("wake/pool", "application/json", "[]")
	te.mustCreate("src", "text/plain", "abcd")
	k := subs.Key{Bucket: "test", ID: "g"}
	if _, _, err := te.PutSubscription(k, pullConfig(t, `{"type":"pull-wake","wake_stream":"wake/pool","pattern":"e/*"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := te.Create(key("e/fork"), forkReq("src", nil, 0)); err != nil {
		t.Fatal(err)
	}
	if l := linkOf(t, te, k, "e/fork"); l.Acked != 4 || l.Tail != 4 {
		t.Fatalf("a fork's link starts at its fork point: %+v", l)
	}
	te.mustCreate("e/x", "text/plain", "12345")
	s, _ := te.Subscription(context.Background(), k)
	if err := te.Commit(context.Background(), subs.Change{Key: k, Incarnation: s.Incarnation, State: s.State,
		Acks: []subs.AckMove{{Path: "e/x", Offset: 5}}}); err != nil {
		t.Fatal(err)
	}
	if err := te.Delete(key("e/x")); err != nil {
		t.Fatal(err)
	}
	te.mustCreate("e/x", "text/plain", "12")
	if l := linkOf(t, te, k, "e/x"); l.Acked != 0 || l.Tail != 2 {
		t.Fatalf("a re-created stream starts afresh: %+v", l)
	}
}
