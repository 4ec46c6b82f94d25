package subs

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Callback serves POST {root}__ds/subscriptions/{id}/callback of a webhook subscription
// (PROTOCOL §7.1, §7.3): bearer must be the wake's callback_token. Without req.Done it
// applies req.Acks and extends the lease; with it, it applies the acks, releases the wake
// and issues the next one when work remains (AckReply.NextWake). Errors, checked in this
// order: ErrNotFound, ErrWrongType (a pull-wake subscription), ErrTokenInvalid,
// ErrTokenExpired, ErrFenced, ErrAckOffset; storage errors. A failed call moves nothing.
func (w *Worker) Callback(ctx context.Context, key Key, bearer string, req AckRequest) (AckReply, error) {
	return w.ackOrCallback(ctx, key, bearer, req, Webhook, kindCallback)
}

// Ack serves POST {root}__ds/subscriptions/{id}/ack of a pull-wake subscription (PROTOCOL
// §7.2): bearer must be the claim's token. Without req.Done it is a heartbeat (extends the
// lease in memory, persists any acks); with it, it applies the acks, releases and issues the
// next wake, with its wake event, when work remains. Errors as Callback (ErrWrongType for a
// webhook subscription).
func (w *Worker) Ack(ctx context.Context, key Key, bearer string, req AckRequest) (AckReply, error) {
	return w.ackOrCallback(ctx, key, bearer, req, PullWake, kindClaim)
}

func (w *Worker) ackOrCallback(ctx context.Context, key Key, bearer string, req AckRequest, typ Type, kind string) (AckReply, error) {
	m, now, err := w.fenced(ctx, key, bearer, req.WakeID, req.Generation, typ, kind)
	if err != nil {
		return AckReply{}, err
	}
	defer m.mu.Unlock()
	defer w.sched.at(key, now)
	if req.Done {
		issued, err := w.finishWake(ctx, m, m.s.State, req.Acks, now)
		return AckReply{NextWake: issued}, err
	}
	if len(req.Acks) > 0 {
		links, err := w.store.Links(ctx, key)
		if err != nil {
			return AckReply{}, err
		}
		if _, err := applyAcks(links, req.Acks); err != nil {
			return AckReply{}, err
		}
		if err := w.commit(ctx, m, m.s.State, req.Acks, nil); err != nil {
			return AckReply{}, err
		}
	}
	m.leaseUntil = now.Add(m.s.LeaseTTL)
	return AckReply{}, nil
}

// Release serves POST {root}__ds/subscriptions/{id}/release (PROTOCOL §7.2): ends the claimed
// wake without acking; if work remains, the next wake is issued with its wake event. The
// reply is 204. Errors as Ack, except ErrAckOffset.
func (w *Worker) Release(ctx context.Context, key Key, bearer string, req ReleaseRequest) error {
	m, now, err := w.fenced(ctx, key, bearer, req.WakeID, req.Generation, PullWake, kindClaim)
	if err != nil {
		return err
	}
	defer m.mu.Unlock()
	defer w.sched.at(key, now)
	_, err = w.finishWake(ctx, m, m.s.State, nil, now)
	return err
}

// fenced locks and refreshes key's mirror, checks the type and the token, ends a lapsed
// lease, and applies the four fencing conditions of PROTOCOL §7.3 (token valid for this
// subscription and incarnation, token generation current, body generation current, body
// wake_id current; a claim token also needs the wake to be held). On success m.mu is held.
func (w *Worker) fenced(ctx context.Context, key Key, bearer, wakeID string, gen uint64, typ Type, kind string) (*sub, time.Time, error) {
	m, err := w.acquire(ctx, key)
	if err != nil {
		return nil, time.Time{}, err
	}
	now := w.clock.Now()
	fail := func(err error) (*sub, time.Time, error) {
		m.mu.Unlock()
		w.sched.at(key, now) // a lease this call ended may leave work to wake
		return nil, now, err
	}
	if m.s.Type != typ {
		return fail(ErrWrongType)
	}
	c, err := checkToken(w.tokenKey(), bearer, kind, key, now)
	if err != nil {
		return fail(err)
	}
	if err := w.expireLease(ctx, m, now); err != nil {
		return fail(err)
	}
	st := m.s.State
	wk := st.Wake
	if c.Inc != m.s.Incarnation || wk == nil || c.Gen != st.Generation || gen != st.Generation ||
		c.Wid != wk.ID || wakeID != wk.ID || (kind == kindClaim && wk.Holder == "") {
		return fail(ErrFenced)
	}
	return m, now, nil
}

// Claim serves POST {root}__ds/subscriptions/{id}/claim (PROTOCOL §7.2) for worker (a
// non-empty name): it takes the lease of the outstanding wake, issuing one first (with its
// wake event) when none is outstanding but work is pending, so a claim right after an
// append sees it. The reply's streams are the pending links now. Errors: ErrNotFound,
// ErrWrongType (webhook subscription), ErrBadWorker, *ClaimedError (another holder's lease
// is running), ErrNoPendingWork, ErrWakeStream (the wake stream cannot take the event);
// storage errors.
func (w *Worker) Claim(ctx context.Context, key Key, worker string) (ClaimReply, error) {
	if worker == "" {
		return ClaimReply{}, ErrBadWorker
	}
	m, err := w.acquire(ctx, key)
	if err != nil {
		return ClaimReply{}, err
	}
	defer m.mu.Unlock()
	now := w.clock.Now()
	defer w.sched.at(key, now)
	if m.s.Type != PullWake {
		return ClaimReply{}, ErrWrongType
	}
	if err := w.expireLease(ctx, m, now); err != nil {
		return ClaimReply{}, err
	}
	if wk := m.s.State.Wake; wk != nil && wk.Holder != "" {
		return ClaimReply{}, &ClaimedError{Holder: wk.Holder, Generation: wk.Generation}
	}
	links, err := w.store.Links(ctx, key)
	if err != nil {
		return ClaimReply{}, err
	}
	p := pending(links)
	if err := w.ensureWake(ctx, m, links, p, now); err != nil {
		return ClaimReply{}, err
	}
	wk := *m.s.State.Wake
	wk.Snapshot, wk.Holder, wk.LeaseUntil = snapshotOf(p), worker, now.Add(m.s.LeaseTTL).UTC()
	st := m.s.State
	st.Wake = &wk
	if err := w.commit(ctx, m, st, nil, nil); err != nil {
		return ClaimReply{}, err
	}
	m.leaseUntil = wk.LeaseUntil
	tok := mintToken(w.tokenKey(), tokenClaims{
		Sub: tokenSubject(key), Inc: m.s.Incarnation, Gen: wk.Generation, Wid: wk.ID,
		Kind: kindClaim, Exp: now.Add(w.opts.TokenTTL).Unix(),
	})
	return ClaimReply{WakeID: wk.ID, Generation: wk.Generation, Token: tok, Streams: wk.Snapshot, LeaseTTL: m.s.LeaseTTL}, nil
}

// ensureWake makes sure an unclaimed wake with pending work is outstanding for a claim:
// it issues one when idle, and ends an outstanding one whose work went away.
func (w *Worker) ensureWake(ctx context.Context, m *sub, links []Link, p []Link, now time.Time) error {
	st := m.s.State
	if len(p) == 0 {
		if st.Wake != nil {
			st.Wake = nil
			if err := w.commit(ctx, m, st, nil, nil); err != nil {
				return err
			}
		}
		return ErrNoPendingWork
	}
	if st.Wake != nil {
		return nil
	}
	issued, err := w.issue(ctx, m, st, false, links, nil, now)
	if err != nil {
		return err
	}
	if !issued {
		return fmt.Errorf("%w: %s", ErrWakeStream, m.s.State.Retry.LastError)
	}
	return nil
}

// MarshalJSON renders the claim reply: {wake_id, generation, token, streams, lease_ttl_ms}.
func (c ClaimReply) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		WakeID     string       `json:"wake_id"`
		Generation uint64       `json:"generation"`
		Token      string       `json:"token"`
		Streams    []streamJSON `json:"streams"`
		LeaseTTLMs int64        `json:"lease_ttl_ms"`
	}{c.WakeID, c.Generation, c.Token, streamsJSON(c.Streams), c.LeaseTTL.Milliseconds()})
}

// MarshalJSON renders exactly {"ok":true,"next_wake":<bool>} (PROTOCOL §7.1, §7.2).
func (r AckReply) MarshalJSON() ([]byte, error) {
	if r.NextWake {
		return []byte(`{"ok":true,"next_wake":true}`), nil
	}
	return []byte(`{"ok":true,"next_wake":false}`), nil
}
