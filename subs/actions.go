package subs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dsd-project/dsd/model"
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
	m, f, now, err := w.fenced(ctx, key, bearer, req.WakeID, req.Generation, typ, kind)
	if err != nil {
		return AckReply{}, err
	}
	defer m.mu.Unlock()
	defer w.sched.at(key, now) // a lapsed lease to end, or a wake this decision issued
	id, err := newWakeID(w.rnd)
	if err != nil {
		return AckReply{}, err
	}
	d, err := m.mach.Ack(f, req.Acks, req.Done, now.UnixMilli(), id)
	if err != nil {
		return AckReply{}, err
	}
	d, err = w.apply(ctx, m, d, now)
	return AckReply{NextWake: d.NextWake}, err
}

// Release serves POST {root}__ds/subscriptions/{id}/release (PROTOCOL §7.2): ends the claimed
// wake without acking; if work remains, the next wake is issued with its wake event. The
// reply is 204. Errors as Ack, except ErrAckOffset.
func (w *Worker) Release(ctx context.Context, key Key, bearer string, req ReleaseRequest) error {
	m, f, now, err := w.fenced(ctx, key, bearer, req.WakeID, req.Generation, PullWake, kindClaim)
	if err != nil {
		return err
	}
	defer m.mu.Unlock()
	defer w.sched.at(key, now)
	id, err := newWakeID(w.rnd)
	if err != nil {
		return err
	}
	d, err := m.mach.Release(f, now.UnixMilli(), id)
	if err != nil {
		return err
	}
	_, err = w.apply(ctx, m, d, now)
	return err
}

// fenced locks and refreshes key's mirror, checks the type and the token (signature, kind,
// subscription, expiry: the 401s) and returns the model.Fence that the token and the body
// present; the model's transition applies the fencing conditions of PROTOCOL §7.3. On
// success m.mu is held.
func (w *Worker) fenced(ctx context.Context, key Key, bearer, wakeID string, gen uint64, typ Type, kind string) (*sub, model.Fence, time.Time, error) {
	m, err := w.acquire(ctx, key)
	if err != nil {
		return nil, model.Fence{}, time.Time{}, err
	}
	now := w.clock.Now()
	if m.s.Type != typ {
		m.mu.Unlock()
		return nil, model.Fence{}, now, ErrWrongType
	}
	c, err := checkToken(w.tokenKey(), bearer, kind, key, now)
	if err != nil {
		m.mu.Unlock()
		return nil, model.Fence{}, now, err
	}
	f := model.Fence{TokenInc: c.Inc, TokenGen: c.Gen, TokenWake: c.Wid, Gen: gen, WakeID: wakeID, Claim: kind == kindClaim}
	return m, f, now, nil
}

// Claim serves POST {root}__ds/subscriptions/{id}/claim (PROTOCOL §7.2) for worker (a
// non-empty name): the model's Claim takes the lease of the outstanding wake, issuing one
// first (with its wake event) when none is outstanding but work is pending, so a claim
// right after an append sees it. The reply's streams are the pending links now. Errors:
// ErrNotFound, ErrWrongType (webhook subscription), ErrBadWorker, *ClaimedError (another
// holder's lease is running), ErrNoPendingWork, ErrWakeStream (the wake stream cannot take
// the event); storage errors.
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
	id, err := newWakeID(w.rnd)
	if err != nil {
		return ClaimReply{}, err
	}
	d, err := m.mach.Claim(worker, id, now.UnixMilli())
	switch {
	case errors.Is(err, ErrAlreadyClaimed):
		return ClaimReply{}, &ClaimedError{Holder: m.mach.Wake.Holder, Generation: m.mach.Wake.Gen}
	case err != nil:
		if _, aerr := w.apply(ctx, m, d, now); aerr != nil {
			return ClaimReply{}, aerr
		}
		return ClaimReply{}, err
	}
	issued := d.Issued
	if d, err = w.apply(ctx, m, d, now); err != nil {
		return ClaimReply{}, err
	}
	if issued && !d.Issued {
		return ClaimReply{}, fmt.Errorf("%w: %s", ErrWakeStream, d.Next.LastError)
	}
	wk := d.Next.Wake
	tok := mintToken(w.tokenKey(), tokenClaims{
		Sub: tokenSubject(key), Inc: m.s.Incarnation, Gen: wk.Gen, Wid: wk.ID,
		Kind: kindClaim, Exp: now.Add(w.opts.TokenTTL).Unix(),
	})
	return ClaimReply{WakeID: wk.ID, Generation: wk.Gen, Token: tok, Streams: wk.Snapshot, LeaseTTL: m.s.LeaseTTL}, nil
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
