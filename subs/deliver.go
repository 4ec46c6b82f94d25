package subs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// maxResponse caps how much of a webhook's answer is read (design 5.4).
const maxResponse = 64 << 10

// maybeAttempt starts the webhook attempt of the outstanding wake when it is due and none
// is running (one attempt per subscription at a time: per-subscription sequencing), or
// schedules a step for when it is due. m.mu held.
func (w *Worker) maybeAttempt(m *sub, now time.Time) {
	st := m.s.State
	if m.s.Type != Webhook || st.Wake == nil || m.inFlight || m.delivered == st.Wake.ID || w.isStopping() {
		return
	}
	if now.Before(st.Retry.NextAttemptAt) {
		w.sched.at(m.s.Key, st.Retry.NextAttemptAt)
		return
	}
	req, err := w.buildRequest(m.s, st.Wake)
	if err != nil { // a stored URL that no longer parses: a failed attempt, as any other
		w.recordFailure(m, m.s.Incarnation, err)
		return
	}
	m.inFlight = true
	w.attempts.Add(1)
	go w.attempt(m, m.s.Incarnation, st.Wake, req)
}

// attempt runs one webhook POST under the concurrency bound and records its outcome.
func (w *Worker) attempt(m *sub, inc uint64, wk *Wake, build func(context.Context) *http.Request) {
	defer w.attempts.Done()
	select {
	case w.sem <- struct{}{}:
	case <-w.runCtx.Done():
		w.abandon(m)
		return
	}
	done, err := w.post(build(w.runCtx))
	<-w.sem
	if w.runCtx.Err() != nil { // cancelled by Stop: not the receiver's failure
		w.abandon(m)
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.inFlight = false
	if err != nil {
		w.recordFailure(m, inc, err)
		return
	}
	w.recordSuccess(m, inc, wk, done)
}

func (w *Worker) abandon(m *sub) {
	m.mu.Lock()
	m.inFlight = false
	m.mu.Unlock()
}

// post sends req and classifies the answer: a 2xx is delivered (done when its JSON body has
// "done": true); anything else (transport error, timeout, refused address, 3xx, non-2xx) is
// an error.
func (w *Worker) post(req *http.Request) (done bool, err error) {
	resp, err := w.client.Do(req)
	if ue := (*url.Error)(nil); errors.As(err, &ue) {
		return false, ue.Err // without the URL, which may carry a secret in its query
	}
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return false, fmt.Errorf("webhook answered %d", resp.StatusCode)
	}
	if err != nil {
		return false, fmt.Errorf("reading the webhook's answer: %w", err)
	}
	var reply struct {
		Done bool `json:"done"`
	}
	return json.Unmarshal(body, &reply) == nil && reply.Done, nil
}

// recordFailure persists a failed attempt: status failed, retry count + 1, next attempt
// after the backoff; the wake stays outstanding (unless its lease lapsed meanwhile). m.mu held.
func (w *Worker) recordFailure(m *sub, inc uint64, cause error) {
	ctx := context.Background()
	if !w.sameIncarnation(ctx, m, inc) {
		return
	}
	now := w.clock.Now()
	st := w.failed(m.s.State, now, cause)
	if err := w.commit(ctx, m, st, nil, nil); err != nil {
		w.log.Warn("recording a webhook failure", "id", m.s.Key.ID, "err", err)
		w.sched.at(m.s.Key, now.Add(storeRetry))
		return
	}
	w.sched.at(m.s.Key, st.Retry.NextAttemptAt)
}

// recordSuccess persists a delivered attempt: status active, retry count 0; with
// {"done":true} it acks exactly the wake's snapshot tails (never moving a cursor back),
// releases the wake and issues the next one when work remains (PROTOCOL §7.1). m.mu held.
func (w *Worker) recordSuccess(m *sub, inc uint64, wk *Wake, done bool) {
	ctx := context.Background()
	if !w.sameIncarnation(ctx, m, inc) {
		return
	}
	now := w.clock.Now()
	st := m.s.State
	st.Status, st.Retry = Active, Retry{}
	current := st.Wake != nil && st.Wake.ID == wk.ID
	var err error
	switch {
	case current && done:
		err = w.finish(ctx, m, st, snapshotAcks(wk), now)
	default:
		if current {
			m.delivered = wk.ID
		}
		err = w.commit(ctx, m, st, nil, nil)
	}
	if err != nil && !errors.Is(err, ErrNotFound) {
		w.log.Warn("recording a webhook delivery", "id", m.s.Key.ID, "err", err)
	}
	w.sched.at(m.s.Key, now)
}

// sameIncarnation refreshes m and reports whether it is still the indexed mirror of the
// incarnation an attempt was made for (a result for a deleted or re-created subscription
// is dropped). m.mu held.
func (w *Worker) sameIncarnation(ctx context.Context, m *sub, inc uint64) bool {
	return w.current(m) && w.refresh(ctx, m) == nil && m.s.Incarnation == inc
}

// finishWake ends the outstanding wake of base with acks (all or nothing), and issues the
// next wake if work remains. It reports whether one was issued.
func (w *Worker) finishWake(ctx context.Context, m *sub, base State, acks []AckMove, now time.Time) (bool, error) {
	links, err := w.store.Links(ctx, m.s.Key)
	if err != nil {
		return false, err
	}
	links, err = applyAcks(links, acks)
	if err != nil {
		return false, err
	}
	base.Wake = nil
	issued, err := w.issue(ctx, m, base, true, links, acks, now)
	if err == nil && !issued {
		m.leaseUntil = time.Time{}
	}
	return issued, err
}

// finish is finishWake for {"done":true}: acks that would not move a cursor are dropped.
func (w *Worker) finish(ctx context.Context, m *sub, base State, acks []AckMove, now time.Time) error {
	links, err := w.store.Links(ctx, m.s.Key)
	if err != nil {
		return err
	}
	acks = forwardOnly(links, acks)
	_, err = w.finishWake(ctx, m, base, acks, now)
	return err
}

// snapshotAcks are the acks of {"done":true}: every snapshot stream at its snapshot tail.
func snapshotAcks(wk *Wake) []AckMove {
	acks := make([]AckMove, len(wk.Snapshot))
	for i, s := range wk.Snapshot {
		acks[i] = AckMove{Path: s.Path, Offset: s.Tail}
	}
	return acks
}

// forwardOnly drops acks that would not move a linked cursor forward within its tail (a
// callback may have acked further, or the stream may be gone or re-created since).
func forwardOnly(links []Link, acks []AckMove) []AckMove {
	cur := make(map[string]Link, len(links))
	for _, l := range links {
		cur[l.Path] = l
	}
	var out []AckMove
	for _, a := range acks {
		if c, ok := cur[a.Path]; ok && a.Offset > c.Acked && a.Offset <= c.Tail {
			out = append(out, a)
		}
	}
	return out
}

// buildRequest prepares the signed POST of a wake (PROTOCOL §7.1). The body is the same
// for every attempt of the wake (same token); the signature gets a fresh t per attempt.
func (w *Worker) buildRequest(s Subscription, wk *Wake) (func(context.Context) *http.Request, error) {
	u, err := url.Parse(s.WebhookURL)
	if err != nil {
		return nil, fmt.Errorf("stored webhook URL: %w", err)
	}
	body := webhookBody(s, wk, w.callbackToken(s, wk))
	loopbackOK := w.opts.AllowLoopback && isDevHost(u.Hostname())
	sig := w.signer()
	return func(ctx context.Context) *http.Request {
		ctx = withLoopback(ctx, loopbackOK)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("User-Agent", "dsd-webhook")
		req.Header.Set(SignatureHeader, sig.header(w.clock.Now(), body))
		return req
	}, nil
}

// callbackToken is the wake's callback token; derived from persisted fields only, so a
// retry after a restart carries the same token.
func (w *Worker) callbackToken(s Subscription, wk *Wake) string {
	return mintToken(w.tokenKey(), tokenClaims{
		Sub: tokenSubject(s.Key), Inc: s.Incarnation, Gen: wk.Generation, Wid: wk.ID,
		Kind: kindCallback, Exp: wk.IssuedAt.Add(w.opts.TokenTTL).Unix(),
	})
}

// streamJSON is one entry of a payload's or claim's streams (PROTOCOL §7.1).
type streamJSON struct {
	Path       string `json:"path"`
	LinkType   string `json:"link_type"`
	Acked      string `json:"acked_offset"`
	Tail       string `json:"tail_offset"`
	HasPending bool   `json:"has_pending"`
}

func streamsJSON(in []StreamInfo) []streamJSON {
	out := make([]streamJSON, len(in))
	for i, s := range in {
		out[i] = streamJSON{s.Path, s.LinkType, s.Acked.String(), s.Tail.String(), s.Tail > s.Acked}
	}
	return out
}

// webhookPayload is the notification (PROTOCOL §7.1).
type webhookPayload struct {
	SubscriptionID string       `json:"subscription_id"`
	WakeID         string       `json:"wake_id"`
	Generation     uint64       `json:"generation"`
	Streams        []streamJSON `json:"streams"`
	CallbackURL    string       `json:"callback_url"`
	CallbackToken  string       `json:"callback_token"`
}

func webhookBody(s Subscription, wk *Wake, token string) []byte {
	b, _ := json.Marshal(webhookPayload{s.Key.ID, wk.ID, wk.Generation, streamsJSON(wk.Snapshot), s.CallbackURL, token})
	return b
}
