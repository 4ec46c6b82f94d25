package subs

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/dsd-project/dsd/model"
)

// fakeStore is an in-memory Store that outlives workers (a "restart" is a new Worker on the
// same fakeStore). It derives links as design 5.3 does: explicit paths ∪ pattern matches,
// minus the wake stream.
type fakeStore struct {
	mu      sync.Mutex
	subs    map[Key]*Subscription
	tails   map[string]map[string]model.Offset // bucket → path → tail
	cursors map[Key]map[string]model.Offset
	events  map[string][][]byte // "bucket/path" of a wake stream → appended events
	keys    Keys
	saves   int
	commits []Change
	fail    map[Key]int // the next n Commits of a key fail with errInjected
}

// errInjected is a storage failure injected by fakeStore.fail.
var errInjected = errors.New("injected storage failure")

func newFakeStore() *fakeStore {
	return &fakeStore{
		subs: map[Key]*Subscription{}, tails: map[string]map[string]model.Offset{},
		cursors: map[Key]map[string]model.Offset{}, events: map[string][][]byte{}, fail: map[Key]int{},
	}
}

func (f *fakeStore) put(s Subscription) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := s
	f.subs[s.Key] = &c
	if f.cursors[s.Key] == nil {
		f.cursors[s.Key] = map[string]model.Offset{}
	}
}

func (f *fakeStore) remove(k Key) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.subs, k)
}

// setTail creates or appends to a stream.
func (f *fakeStore) setTail(bucket, path string, tail model.Offset) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.tails[bucket] == nil {
		f.tails[bucket] = map[string]model.Offset{}
	}
	f.tails[bucket][path] = tail
}

// hasStream reports whether bucket/path exists; dropStream deletes it.
func (f *fakeStore) hasStream(bucket, path string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.tails[bucket][path]
	return ok
}

func (f *fakeStore) dropStream(bucket, path string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.tails[bucket], path)
}

func (f *fakeStore) tail(bucket, path string) model.Offset {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tails[bucket][path]
}

func (f *fakeStore) cursor(k Key, path string) model.Offset {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cursors[k][path]
}

func (f *fakeStore) state(k Key) State {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s := f.subs[k]; s != nil {
		return copyState(s.State)
	}
	return State{}
}

func (f *fakeStore) wakeEvents(bucket, path string) [][]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]byte(nil), f.events[bucket+"/"+path]...)
}

func copyState(s State) State {
	if s.Wake != nil {
		w := *s.Wake
		w.Snapshot = append([]StreamInfo(nil), w.Snapshot...)
		s.Wake = &w
	}
	return s
}

func (f *fakeStore) Subscriptions(context.Context) ([]Subscription, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Subscription
	for _, s := range f.subs {
		c := *s
		c.State = copyState(s.State)
		out = append(out, c)
	}
	return out, nil
}

func (f *fakeStore) Subscription(_ context.Context, k Key) (Subscription, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.subs[k]
	if s == nil {
		return Subscription{}, ErrNotFound
	}
	c := *s
	c.State = copyState(s.State)
	return c, nil
}

func (f *fakeStore) Links(_ context.Context, k Key) ([]Link, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.subs[k]
	if s == nil {
		return nil, ErrNotFound
	}
	types := map[string]string{}
	for p := range f.tails[k.Bucket] {
		if s.Pattern != "" && model.MatchGlob(s.Pattern, p) {
			types[p] = LinkGlob
		}
	}
	for _, p := range s.Streams {
		types[p] = LinkExplicit
	}
	delete(types, s.WakeStream)
	var out []Link
	for p, lt := range types {
		acked := f.cursors[k][p]
		tail, ok := f.tails[k.Bucket][p]
		if !ok {
			tail = acked
		}
		out = append(out, Link{Path: p, LinkType: lt, Acked: acked, Tail: tail})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path > out[j].Path }) // any order
	return out, nil
}

func (f *fakeStore) Commit(_ context.Context, c Change) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.subs[c.Key]
	if s == nil || s.Incarnation != c.Incarnation {
		return ErrNotFound
	}
	if f.fail[c.Key] > 0 {
		f.fail[c.Key]--
		return errInjected
	}
	if c.Event != nil {
		t, ok := f.tails[c.Key.Bucket][c.Event.Stream]
		if !ok {
			return ErrWakeStream
		}
		f.tails[c.Key.Bucket][c.Event.Stream] = t + model.Offset(len(c.Event.Body))
		k := c.Key.Bucket + "/" + c.Event.Stream
		f.events[k] = append(f.events[k], append([]byte(nil), c.Event.Body...))
	}
	s.State = copyState(c.State)
	for _, a := range c.Acks {
		f.cursors[c.Key][a.Path] = a.Offset
	}
	c.State = copyState(c.State)
	f.commits = append(f.commits, c)
	return nil
}

func (f *fakeStore) LoadKeys(context.Context) (Keys, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.keys, nil
}

func (f *fakeStore) SaveKeys(_ context.Context, k Keys) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.keys = k
	f.saves++
	return nil
}

// fakeClock is a manual Clock: time moves only by advance.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []clockWaiter
}

type clockWaiter struct {
	at time.Time
	ch chan time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) At(t time.Time) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if !t.After(c.now) {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, clockWaiter{t, ch})
	return ch
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if !w.at.After(c.now) {
			w.ch <- c.now
		} else {
			kept = append(kept, w)
		}
	}
	c.waiters = kept
}

// eventually polls cond every 5 ms for up to 5 s of real time.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// never checks that cond stays false for d of real time (absence of an async effect).
func never(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if cond() {
			t.Fatalf("unexpected: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The Store may persist State and Keys as JSON: they round-trip exactly.
func TestStateAndKeysRoundTripAsJSON(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 123_000_000, time.UTC)
	st := State{Generation: 4, Status: Failed, Retry: Retry{Count: 2, NextAttemptAt: at, LastError: "x"},
		Wake: &Wake{ID: "w_1", Generation: 4, IssuedAt: at, Trigger: "a", Holder: "h", LeaseUntil: at,
			Snapshot: []StreamInfo{{Path: "a", LinkType: LinkGlob, Acked: 1, Tail: 9}}}}
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var back State
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, st) {
		t.Fatalf("state %s → %+v (%v)", b, back, err)
	}
	k := Keys{Signing: []SigningKey{{Seed: make([]byte, 32), Created: at}}, TokenKey: make([]byte, 32)}
	b, _ = json.Marshal(k)
	var kb Keys
	if err := json.Unmarshal(b, &kb); err != nil || !reflect.DeepEqual(kb, k) {
		t.Fatalf("keys %s → %+v (%v)", b, kb, err)
	}
}
