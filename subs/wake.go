package subs

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"
)

// step is one level-triggered decision round for k (design 5.4): expire a lapsed lease,
// issue a wake when idle with pending work, start a due webhook attempt, and schedule the
// next round. Errors are logged and retried.
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
		w.log.Warn("subscription step failed", "bucket", k.Bucket, "id", k.ID, "err", err)
		w.sched.at(k, w.clock.Now().Add(storeRetry))
		return
	}
	defer m.mu.Unlock()
	if err := w.advance(ctx, m); err != nil && !errors.Is(err, ErrNotFound) {
		w.log.Warn("subscription step failed", "bucket", k.Bucket, "id", k.ID, "err", err)
		w.sched.at(k, w.clock.Now().Add(storeRetry))
	}
}

// advance does the work of step with m.mu held and m refreshed.
func (w *Worker) advance(ctx context.Context, m *sub) error {
	now := w.clock.Now()
	if err := w.expireLease(ctx, m, now); err != nil {
		return err
	}
	st := m.s.State
	if st.Wake == nil {
		if m.s.Type == PullWake && now.Before(st.Retry.NextAttemptAt) {
			w.sched.at(m.s.Key, st.Retry.NextAttemptAt)
			return nil
		}
		links, err := w.store.Links(ctx, m.s.Key)
		if err != nil {
			return err
		}
		if _, err := w.issue(ctx, m, st, false, links, nil, now); err != nil {
			return err
		}
	}
	w.maybeAttempt(m, now)
	if !m.leaseUntil.IsZero() {
		w.sched.at(m.s.Key, m.leaseUntil)
	}
	return nil
}

// expireLease ends a lapsed lease (PROTOCOL §7.3): the wake, holder and token are cleared
// (the generation stays, so every token of it is fenced). The retry schedule is kept: a new
// wake's first attempt still waits for NextAttemptAt (D10).
func (w *Worker) expireLease(ctx context.Context, m *sub, now time.Time) error {
	if m.s.State.Wake == nil || m.leaseUntil.IsZero() || now.Before(m.leaseUntil) {
		return nil
	}
	st := m.s.State
	st.Wake = nil
	if err := w.commit(ctx, m, st, nil, nil); err != nil {
		return err
	}
	m.leaseUntil = time.Time{}
	return nil
}

// commit persists a decision and, on success, makes it the mirror's state.
func (w *Worker) commit(ctx context.Context, m *sub, st State, acks []AckMove, ev *WakeEvent) error {
	err := w.store.Commit(ctx, Change{Key: m.s.Key, Incarnation: m.s.Incarnation, State: st, Acks: acks, Event: ev})
	if err != nil {
		return err
	}
	m.s.State = st
	return nil
}

// pending returns the links with unacknowledged data, sorted by path.
func pending(links []Link) []Link {
	var p []Link
	for _, l := range links {
		if l.Tail > l.Acked {
			p = append(p, l)
		}
	}
	sort.Slice(p, func(i, j int) bool { return p[i].Path < p[j].Path })
	return p
}

// snapshotOf is the wake snapshot of pending links (at most MaxSnapshot).
func snapshotOf(p []Link) []StreamInfo {
	if len(p) > MaxSnapshot {
		p = p[:MaxSnapshot]
	}
	out := make([]StreamInfo, len(p))
	for i, l := range p {
		out[i] = StreamInfo{Path: l.Path, LinkType: l.LinkType, Acked: l.Acked, Tail: l.Tail}
	}
	return out
}

// issue starts the next wake from base (an idle State) when links hold pending work, in
// one Commit with acks (the cursor moves of the decision that freed the subscription,
// already applied to links); dirty says base or acks must be committed even without a
// wake. A pull-wake wake writes its event in the same Commit; if the wake stream cannot take
// it, base and acks are committed with status failed and a retry scheduled with the backoff.
// It reports whether a wake was issued.
func (w *Worker) issue(ctx context.Context, m *sub, base State, dirty bool, links []Link, acks []AckMove, now time.Time) (bool, error) {
	st := base
	p := pending(links)
	if len(p) == 0 {
		if dirty || len(acks) > 0 {
			return false, w.commit(ctx, m, st, acks, nil)
		}
		return false, nil
	}
	id, err := newWakeID(w.rnd)
	if err != nil {
		return false, err
	}
	wk := &Wake{ID: id, Generation: st.Generation + 1, IssuedAt: now.UTC(), Trigger: p[0].Path, Snapshot: snapshotOf(p)}
	if m.s.Type == Webhook {
		wk.LeaseUntil = now.Add(m.s.LeaseTTL).UTC()
	}
	next := st
	next.Generation, next.Wake = wk.Generation, wk
	var ev *WakeEvent
	if m.s.Type == PullWake {
		ev = &WakeEvent{Stream: m.s.WakeStream, Body: wakeEventBody(m.s.Key.ID, wk, now)}
		next.Status, next.Retry = Active, Retry{}
	}
	err = w.commit(ctx, m, next, acks, ev)
	if errors.Is(err, ErrWakeStream) {
		return false, w.wakeStreamFailed(ctx, m, st, acks, now, err)
	}
	if err != nil {
		return false, err
	}
	m.leaseUntil = wk.LeaseUntil
	m.delivered = ""
	return true, nil
}

// wakeStreamFailed records a failed pull-wake event append as a failed attempt.
func (w *Worker) wakeStreamFailed(ctx context.Context, m *sub, base State, acks []AckMove, now time.Time, cause error) error {
	st := w.failed(base, now, cause)
	if err := w.commit(ctx, m, st, acks, nil); err != nil {
		return err
	}
	w.sched.at(m.s.Key, st.Retry.NextAttemptAt)
	return nil
}

// failed returns st after one more failed attempt: status failed, the next attempt after
// the backoff (D10).
func (w *Worker) failed(st State, now time.Time, cause error) State {
	n := st.Retry.Count + 1
	st.Status = Failed
	st.Retry = Retry{Count: n, NextAttemptAt: now.Add(Backoff(n, w.jitter())).UTC(), LastError: truncate(cause.Error(), 200)}
	return st
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func newWakeID(rnd io.Reader) (string, error) {
	var b [12]byte
	if _, err := io.ReadFull(rnd, b[:]); err != nil {
		return "", fmt.Errorf("subs: drawing a wake id: %w", err)
	}
	return "w_" + hex.EncodeToString(b[:]), nil
}

// wakeEventBody is the pull-wake event (PROTOCOL §7.2):
// {"type":"wake","subscription_id","stream","generation","ts"} with ts in Unix ms.
func wakeEventBody(id string, wk *Wake, now time.Time) []byte {
	b, _ := json.Marshal(struct {
		Type           string `json:"type"`
		SubscriptionID string `json:"subscription_id"`
		Stream         string `json:"stream"`
		Generation     uint64 `json:"generation"`
		TS             int64  `json:"ts"`
	}{"wake", id, wk.Trigger, wk.Generation, now.UnixMilli()})
	return b
}

// applyAcks checks acks against links (PROTOCOL §7.1, §7.2: a linked stream, not below its
// cursor, not past its tail; all or nothing) and returns links with the cursors moved.
// Errors: ErrAckOffset with the offending stream.
func applyAcks(links []Link, acks []AckMove) ([]Link, error) {
	out := append([]Link(nil), links...)
	idx := make(map[string]int, len(out))
	for i, l := range out {
		idx[l.Path] = i
	}
	for _, a := range acks {
		i, ok := idx[a.Path]
		switch {
		case !ok:
			return nil, fmt.Errorf("%w: %q is not linked to this subscription", ErrAckOffset, a.Path)
		case a.Offset < out[i].Acked:
			return nil, fmt.Errorf("%w: %q would move back from %s", ErrAckOffset, a.Path, out[i].Acked)
		case a.Offset > out[i].Tail:
			return nil, fmt.Errorf("%w: %q is past the tail %s", ErrAckOffset, a.Path, out[i].Tail)
		}
		out[i].Acked = a.Offset
	}
	return out, nil
}
