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

	"github.com/dsd-project/dsd/model"
)

// maxResponse caps how much of a webhook's answer is read (design 5.4).
const maxResponse = 64 << 10

// maybeAttempt starts the webhook attempt of the outstanding wake when the model says it
// is due and none is running (one attempt per subscription at a time: per-subscription
// sequencing). m.mu held.
func (w *Worker) maybeAttempt(m *sub, now time.Time) {
	if m.inFlight || w.isStopping() || !m.mach.AttemptDue(now.UnixMilli()) {
		return
	}
	wk := m.mach.Wake
	req, err := w.buildRequest(m.s, wk)
	if err != nil { // a stored URL that no longer parses: a failed attempt, as any other
		w.record(m, m.s.Incarnation, wk.ID, false, false, err)
		return
	}
	m.inFlight = true
	w.attempts.Add(1)
	w.sched.begin()
	go w.attempt(m, m.s.Incarnation, wk.ID, req)
}

// attempt runs one webhook POST under the concurrency bound and records its outcome.
func (w *Worker) attempt(m *sub, inc uint64, wakeID string, build func(context.Context) *http.Request) {
	defer w.attempts.Done()
	defer w.sched.end()
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
	w.record(m, inc, wakeID, err == nil, done, err)
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

// record persists the outcome of a POST of wake wakeID as the model's Delivered decision
// (PROTOCOL §7.1): a 2xx resets the retry schedule and, with {"done":true}, acks the
// snapshot, ends the wake and issues the next one when work remains; a failure schedules
// the next attempt after the backoff. An outcome for a deleted or re-created subscription
// is dropped; one that cannot be stored is lost and the wake attempted again. m.mu held.
func (w *Worker) record(m *sub, inc uint64, wakeID string, ok, done bool, cause error) {
	ctx := context.Background()
	if !w.current(m) || w.refresh(ctx, m) != nil || m.s.Incarnation != inc {
		return
	}
	now := w.clock.Now()
	reason := ""
	if cause != nil {
		reason = cause.Error()
	}
	id, err := newWakeID(w.rnd)
	if err == nil {
		d := m.mach.Delivered(wakeID, ok, done, reason, now.UnixMilli(), w.jitter(), id)
		_, err = w.apply(ctx, m, d, now)
	}
	if err != nil {
		if !errors.Is(err, ErrNotFound) {
			w.retryLater(m.s.Key, err)
		}
		return
	}
	w.sched.at(m.s.Key, now)
}

// buildRequest prepares the signed POST of a wake (PROTOCOL §7.1). The body is the same
// for every attempt of the wake (same token); the signature gets a fresh t per attempt.
func (w *Worker) buildRequest(s Subscription, wk *model.SubWake) (func(context.Context) *http.Request, error) {
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
func (w *Worker) callbackToken(s Subscription, wk *model.SubWake) string {
	return mintToken(w.tokenKey(), tokenClaims{
		Sub: tokenSubject(s.Key), Inc: s.Incarnation, Gen: wk.Gen, Wid: wk.ID,
		Kind: kindCallback, Exp: timeOf(wk.IssuedMs).Add(w.opts.TokenTTL).Unix(),
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

func webhookBody(s Subscription, wk *model.SubWake, token string) []byte {
	b, _ := json.Marshal(webhookPayload{s.Key.ID, wk.ID, wk.Gen, streamsJSON(wk.Snapshot), s.CallbackURL, token})
	return b
}
