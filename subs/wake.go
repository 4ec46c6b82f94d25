package subs

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/dsd-project/dsd/model"
)

// step is one level-triggered decision round for k (design 5.4): the model's Step (end a
// lapsed lease, issue a wake when idle with pending work and the retry schedule allows),
// then a due webhook attempt, then the next round at the machine's next due time. Errors
// are logged and retried.
func (w *Worker) step(k Key) {
	if w.isStopping() {
		return
	}
	ctx := context.Background()
	m, err := w.acquire(ctx, k)
	if errors.Is(err, ErrNotFound) {
		return
	}
	if err != nil {
		w.retryLater(k, err)
		return
	}
	defer m.mu.Unlock()
	now := w.clock.Now()
	id, err := newWakeID(w.rnd)
	if err == nil {
		_, err = w.apply(ctx, m, m.mach.Step(id, now.UnixMilli()), now)
	}
	if err != nil && !errors.Is(err, ErrNotFound) {
		w.retryLater(k, err)
		return
	}
	w.follow(m, now)
}

// retryLater logs a failed decision round and schedules another after storeRetry.
func (w *Worker) retryLater(k Key, err error) {
	w.log.Warn("subscription step failed", "bucket", k.Bucket, "id", k.ID, "err", err)
	w.sched.at(k, w.clock.Now().Add(storeRetry))
}

// follow starts a due webhook attempt and schedules the next round at the machine's next
// due time (a lease deadline, the end of a backoff). m.mu held.
func (w *Worker) follow(m *sub, now time.Time) {
	w.maybeAttempt(m, now)
	if due := m.mach.NextDueMs(now.UnixMilli()); due != 0 {
		w.sched.at(m.s.Key, time.UnixMilli(due))
	}
}

// apply performs decision d of m's machine at now (m.mu held): when d must persist, one
// Commit with the new State, the cursor moves and, for an issued pull-wake wake, its event;
// if the wake stream cannot take the event, the model's WakeEventFailed decision is
// committed instead (no wake, a failed attempt with its backoff). On success the machine
// becomes the decision's; it returns the decision that was applied. Errors: ErrNotFound,
// storage errors (nothing changes).
func (w *Worker) apply(ctx context.Context, m *sub, d model.SubDecision, now time.Time) (model.SubDecision, error) {
	if !d.Persist {
		m.mach = d.Next
		return d, nil
	}
	err := w.commit(ctx, m, d)
	if errors.Is(err, ErrWakeStream) && d.Event() {
		d = d.WakeEventFailed(now.UnixMilli(), w.jitter(), err.Error())
		err = w.commit(ctx, m, d)
	}
	if err != nil {
		return d, err
	}
	m.mach, m.s.State = d.Next, stateOf(d.Next)
	return d, nil
}

// commit persists d as one Change.
func (w *Worker) commit(ctx context.Context, m *sub, d model.SubDecision) error {
	c := Change{Key: m.s.Key, Incarnation: m.s.Incarnation, State: stateOf(d.Next), Acks: d.Acks}
	if d.Event() {
		c.Event = &WakeEvent{Stream: m.s.WakeStream, Body: wakeEventBody(m.s.Key.ID, d.Next.Wake)}
	}
	return w.store.Commit(ctx, c)
}

func newWakeID(rnd io.Reader) (string, error) {
	var b [12]byte
	if _, err := io.ReadFull(rnd, b[:]); err != nil {
		return "", fmt.Errorf("subs: drawing a wake id: %w", err)
	}
	return "w_" + hex.EncodeToString(b[:]), nil
}

// wakeEventBody is the pull-wake event (PROTOCOL §7.2):
// {"type":"wake","subscription_id","stream","generation","ts"} with ts the issue time in
// Unix ms.
func wakeEventBody(id string, wk *model.SubWake) []byte {
	b, _ := json.Marshal(struct {
		Type           string `json:"type"`
		SubscriptionID string `json:"subscription_id"`
		Stream         string `json:"stream"`
		Generation     uint64 `json:"generation"`
		TS             int64  `json:"ts"`
	}{"wake", id, wk.Trigger, wk.Gen, wk.IssuedMs})
	return b
}
