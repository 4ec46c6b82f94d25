package subs

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"testing"

	"github.com/dsd-project/dsd/model"
)

// oracle is the sequential reference of one subscription for TestWorkerFollowsTheModel: the
// model machine driven the way the worker is documented to drive it (package doc), without
// goroutines, a Store or restarts to survive. It reads only the environment from the
// fakeStore (stream tails, whether the wake stream exists); its cursors, state, events and
// expected POSTs are its own.
type oracle struct {
	t         *testing.T
	s         Subscription
	fs        *fakeStore
	u         float64 // the jitter the worker draws (constant in this test)
	mach      model.SubMachine
	persisted model.SubMachine // the last committed machine
	cursors   map[string]model.Offset
	due       int64 // the earliest step requested (Unix ms); 0: none
	attempt   *model.SubWake
	fail      int // injected commit failures still to come (as fakeStore.fail)
	events    []wakeEvent
	posts     []expectedPost
	ids       map[string]uint64 // the worker's wake ids by generation, learned as seen
	gens      map[uint64]string
}

// expectedPost is a webhook POST the oracle expects.
type expectedPost struct {
	wake model.SubWake
	atMs int64
}

func newOracle(t *testing.T, s Subscription, fs *fakeStore, u float64) *oracle {
	m := machineOf(s, nil)
	return &oracle{t: t, s: s, fs: fs, u: u, mach: m, persisted: m, cursors: map[string]model.Offset{},
		ids: map[string]uint64{}, gens: map[uint64]string{}}
}

// links derives the links as design 5.3 does, over the environment's tails and the
// oracle's own cursors.
func (o *oracle) links() []Link {
	o.fs.mu.Lock()
	tails := map[string]model.Offset{}
	for p, t := range o.fs.tails[o.s.Key.Bucket] {
		tails[p] = t
	}
	o.fs.mu.Unlock()
	types := map[string]string{}
	for p := range tails {
		if o.s.Pattern != "" && model.MatchGlob(o.s.Pattern, p) {
			types[p] = LinkGlob
		}
	}
	for _, p := range o.s.Streams {
		types[p] = LinkExplicit
	}
	delete(types, o.s.WakeStream)
	var out []Link
	for p, lt := range types {
		acked := o.cursors[p]
		tail, ok := tails[p]
		if !ok {
			tail = acked
		}
		out = append(out, Link{Path: p, LinkType: lt, Acked: acked, Tail: tail})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// routes reports whether an append to path notifies this subscription.
func (o *oracle) routes(path string) bool {
	if o.s.Pattern != "" && model.MatchGlob(o.s.Pattern, path) {
		return true
	}
	for _, p := range o.s.Streams {
		if p == path {
			return true
		}
	}
	return false
}

func (o *oracle) request(ms int64) {
	if o.due == 0 || ms < o.due {
		o.due = ms
	}
}

func (o *oracle) nextID() string { return fmt.Sprintf("g%d", o.mach.Gen+1) }

// refresh is the worker's acquire: the links as the Store derives them now.
func (o *oracle) refresh() { o.mach = o.mach.SetLinks(o.links()) }

// apply is the worker's apply: one commit per persisted decision, the wake-event failure
// decision when the wake stream is missing, injected storage failures.
func (o *oracle) apply(d model.SubDecision, nowMs int64) (model.SubDecision, error) {
	if !d.Persist {
		o.mach = d.Next
		return d, nil
	}
	if o.fail > 0 {
		o.fail--
		return d, errInjected
	}
	if d.Event() && !o.fs.hasStream(o.s.Key.Bucket, o.s.WakeStream) {
		d = d.WakeEventFailed(nowMs, o.u, ErrWakeStream.Error())
		if o.fail > 0 {
			o.fail--
			return d, errInjected
		}
	}
	o.mach, o.persisted = d.Next, d.Next
	for _, a := range d.Acks {
		o.cursors[a.Path] = a.Offset
	}
	if d.Event() {
		w := d.Next.Wake
		o.events = append(o.events, wakeEvent{Type: "wake", SubscriptionID: o.s.Key.ID, Stream: w.Trigger, Generation: w.Gen, TS: w.IssuedMs})
	}
	return d, nil
}

// settle runs due steps and attempt results at nowMs until nothing is left, as the worker's
// loop does.
func (o *oracle) settle(nowMs int64, mode func() string) {
	for range 10000 {
		switch {
		case o.due != 0 && o.due <= nowMs:
			o.due = 0
			o.step(nowMs)
		case o.attempt != nil:
			o.deliver(nowMs, mode())
		default:
			return
		}
	}
	o.t.Fatalf("%s: the oracle found no fixed point", o.s.Key.ID)
}

func (o *oracle) step(nowMs int64) {
	o.refresh()
	if _, err := o.apply(o.mach.Step(o.nextID(), nowMs), nowMs); err != nil {
		o.request(nowMs + storeRetry.Milliseconds())
		return
	}
	o.follow(nowMs)
}

func (o *oracle) follow(nowMs int64) {
	if o.attempt == nil && o.mach.AttemptDue(nowMs) {
		w := *o.mach.Wake
		o.attempt = &w
	}
	if due := o.mach.NextDueMs(nowMs); due != 0 {
		o.request(due)
	}
}

// deliver is the outcome of the running POST under the receiver's mode.
func (o *oracle) deliver(nowMs int64, mode string) {
	w := *o.attempt
	o.attempt = nil
	o.posts = append(o.posts, expectedPost{wake: w, atMs: nowMs})
	ok, done, reason := mode != "fail", mode == "done", ""
	if !ok {
		reason = "webhook answered 500"
	}
	o.refresh()
	d := o.mach.Delivered(w.ID, ok, done, reason, nowMs, o.u, o.nextID())
	if _, err := o.apply(d, nowMs); err != nil {
		o.request(nowMs + storeRetry.Milliseconds())
		return
	}
	o.request(nowMs)
}

// restart is what a new Worker on the same Store starts from.
func (o *oracle) restart(nowMs int64) {
	o.attempt = nil
	o.mach = o.persisted.Restart(nowMs)
	o.due = nowMs
}

// ack is Callback / Ack.
func (o *oracle) ack(f model.Fence, acks []AckMove, done bool, nowMs int64) (AckReply, error) {
	o.refresh()
	defer o.request(nowMs)
	d, err := o.mach.Ack(f, acks, done, nowMs, o.nextID())
	if err != nil {
		return AckReply{}, err
	}
	d, err = o.apply(d, nowMs)
	return AckReply{NextWake: d.NextWake}, err
}

func (o *oracle) release(f model.Fence, nowMs int64) error {
	o.refresh()
	defer o.request(nowMs)
	d, err := o.mach.Release(f, nowMs, o.nextID())
	if err != nil {
		return err
	}
	_, err = o.apply(d, nowMs)
	return err
}

func (o *oracle) claim(worker string, nowMs int64) (*model.SubWake, error) {
	o.refresh()
	defer o.request(nowMs)
	d, err := o.mach.Claim(worker, o.nextID(), nowMs)
	switch {
	case errors.Is(err, model.ErrSubClaimed):
		return nil, &ClaimedError{Holder: o.mach.Wake.Holder, Generation: o.mach.Wake.Gen}
	case err != nil:
		if _, aerr := o.apply(d, nowMs); aerr != nil {
			return nil, aerr
		}
		return nil, err
	}
	issued := d.Issued
	if d, err = o.apply(d, nowMs); err != nil {
		return nil, err
	}
	if issued && !d.Issued {
		return nil, fmt.Errorf("%w: %s", ErrWakeStream, d.Next.LastError)
	}
	return d.Next.Wake, nil
}

// name maps a worker wake id to the oracle's name of its generation ("g<gen>"), checking
// that each generation has one id and each id one generation. Oracle names pass through.
func (o *oracle) name(id string, gen uint64) string {
	if len(id) < 2 || id[:2] != "w_" {
		return id
	}
	if g, ok := o.ids[id]; ok && g != gen {
		o.t.Fatalf("%s: wake id %s names generations %d and %d", o.s.Key.ID, id, g, gen)
	}
	if prev, ok := o.gens[gen]; ok && prev != id {
		o.t.Fatalf("%s: generation %d has wake ids %s and %s", o.s.Key.ID, gen, prev, id)
	}
	o.ids[id], o.gens[gen] = gen, id
	return fmt.Sprintf("g%d", gen)
}

// toOracle translates a wake id the test got from the worker; an unknown one stays unique.
func (o *oracle) toOracle(id string) string {
	if g, ok := o.ids[id]; ok {
		return fmt.Sprintf("g%d", g)
	}
	return "unknown:" + id
}

// norm is m comparable across worker and oracle: wake ids by generation, empty slices nil.
func (o *oracle) norm(m model.SubMachine, withLinks bool) model.SubMachine {
	if !withLinks || len(m.Links) == 0 {
		m.Links = nil
	}
	if m.Wake != nil {
		w := *m.Wake
		w.ID = o.name(w.ID, w.Gen)
		if len(w.Snapshot) == 0 {
			w.Snapshot = nil
		}
		m.Wake = &w
	}
	return m
}

// check compares the worker's results with the oracle's: the persisted state, the worker's
// in-memory machine, the cursors, the wake events and the webhook POSTs.
func (o *oracle) check(w *Worker, r *receiver, op string) {
	t := o.t
	t.Helper()
	s, err := o.fs.Subscription(context.Background(), o.s.Key)
	if err != nil {
		t.Fatalf("%s after %s: %v", o.s.Key.ID, op, err)
	}
	if got, want := o.norm(machineOf(s, nil), false), o.norm(o.persisted, false); !reflect.DeepEqual(got, want) {
		t.Fatalf("%s after %s: persisted state diverges\nworker %s\nmodel  %s", o.s.Key.ID, op, describe(got), describe(want))
	}
	mirror, ok := w.machine(o.s.Key)
	if !ok {
		t.Fatalf("%s after %s: the worker has no machine", o.s.Key.ID, op)
	}
	if got, want := o.norm(mirror, true), o.norm(o.mach, true); !reflect.DeepEqual(got, want) {
		t.Fatalf("%s after %s: the worker's machine diverges\nworker %s\nmodel  %s", o.s.Key.ID, op, describe(got), describe(want))
	}
	for _, l := range o.links() {
		if c := o.fs.cursor(o.s.Key, l.Path); c != l.Acked {
			t.Fatalf("%s after %s: cursor of %s is %d, the model's %d", o.s.Key.ID, op, l.Path, c, l.Acked)
		}
	}
	if o.s.Type == PullWake {
		got := decodeEvents(t, o.fs.wakeEvents(o.s.Key.Bucket, o.s.WakeStream))
		if len(got) != len(o.events) || len(got) > 0 && !reflect.DeepEqual(got, o.events) {
			t.Fatalf("%s after %s: wake events diverge\nworker %+v\nmodel  %+v", o.s.Key.ID, op, got, o.events)
		}
		return
	}
	if n := r.count(); n != len(o.posts) {
		t.Fatalf("%s after %s: %d webhook POSTs, the model expects %d", o.s.Key.ID, op, n, len(o.posts))
	}
	for i, e := range o.posts {
		p := r.get(i)
		want := streamsJSON(e.wake.Snapshot)
		if o.name(p.p.WakeID, p.p.Generation) != e.wake.ID || p.p.Generation != e.wake.Gen ||
			!reflect.DeepEqual(p.p.Streams, want) || p.at.UnixMilli() != e.atMs {
			t.Fatalf("%s after %s: POST %d diverges\nworker %+v at %d\nmodel  %+v at %d", o.s.Key.ID, op, i, p.p, p.at.UnixMilli(), e.wake, e.atMs)
		}
	}
}

func describe(m model.SubMachine) string {
	s := fmt.Sprintf("%+v", m)
	if m.Wake != nil {
		s += fmt.Sprintf(" wake %+v", *m.Wake)
	}
	return s
}

// machine returns a copy of the worker's machine for k.
func (w *Worker) machine(k Key) (model.SubMachine, bool) {
	w.mu.Lock()
	m := w.subs[k.Bucket][k.ID]
	w.mu.Unlock()
	if m == nil {
		return model.SubMachine{}, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mach, m.loaded
}
