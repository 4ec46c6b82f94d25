package model

import (
	"fmt"
	"slices"
	"strings"
)

// The transitions of the subscription routes and of webhook delivery results (base
// protocol §7.1-§7.3). Each checks in the order the routes answer and changes nothing on
// error, except Claim's NO_PENDING_WORK, whose decision may withdraw a stale wake.

// SetLinks replaces the links with the Store's current derivation (design 5.3: explicit
// links ∪ pattern matches, cursors of the visible incarnations), sorted by path.
func (m SubMachine) SetLinks(links []SubLink) SubMachine {
	m.Links = slices.Clone(links)
	slices.SortFunc(m.Links, func(a, b SubLink) int { return strings.Compare(a.Path, b.Path) })
	return m
}

// Append raises the tail of the linked stream path to tail (never backwards); a path that
// is not linked changes nothing.
func (m SubMachine) Append(path string, tail Offset) SubMachine {
	i, ok := m.link(path)
	if !ok {
		return m
	}
	m.Links = slices.Clone(m.Links)
	m.Links[i].Tail = max(m.Links[i].Tail, tail)
	return m
}

func (m SubMachine) link(path string) (int, bool) { return findLink(m.Links, path) }

// findLink finds path in links sorted by path.
func findLink(links []SubLink, path string) (int, bool) {
	return slices.BinarySearchFunc(links, path, func(l SubLink, p string) int { return strings.Compare(l.Path, p) })
}

// Claim gives the lease to worker (base protocol §7.2) at nowMs, after ending a lapsed
// lease: the outstanding wake, or a new one (wakeID, with its event, whatever the retry
// schedule: the claimer asks now) when idle; the wake takes a fresh snapshot of the pending
// links. Errors: ErrSubClaimed (another lease runs), ErrSubNoPendingWork; with the latter
// the decision withdraws an unclaimed wake whose work went away (else no later work could
// wake anyone): persist it when Persist is set.
func (m SubMachine) Claim(worker, wakeID string, nowMs int64) (SubDecision, error) {
	n, expired := m.expire(nowMs)
	if n.Wake != nil && n.Wake.Holder != "" {
		return SubDecision{Next: m, before: m}, ErrSubClaimed
	}
	if !n.Pending() {
		if n.Wake != nil {
			n.Wake, expired = nil, true
		}
		return SubDecision{Next: n, before: n, Persist: expired}, ErrSubNoPendingWork
	}
	d := SubDecision{before: n, Persist: true}
	if n.Wake == nil {
		n, d.Issued = n.issue(wakeID, nowMs), true
	}
	w := *n.Wake
	w.Snapshot, w.Holder, w.LeaseUntilMs = wakeSnapshot(n.PendingLinks()), worker, nowMs+n.LeaseMs
	n.Wake = &w
	d.Next = n
	return d, nil
}

// Ack applies a callback (webhook, §7.1) or an ack (pull-wake, §7.2) at nowMs under fence
// f: acks all or nothing; without done a heartbeat that gives the lease a full TTL again
// (persisted only with acks); with done the wake ends and the next one is issued (wakeID)
// when work remains and the retry schedule allows. Errors: ErrSubFenced (also when the
// lease lapsed by nowMs), ErrSubAckOffset with the offending stream.
func (m SubMachine) Ack(f Fence, acks []SubAck, done bool, nowMs int64, wakeID string) (SubDecision, error) {
	n, _ := m.expire(nowMs)
	if !n.current(f) {
		return SubDecision{Next: m, before: m}, ErrSubFenced
	}
	links, err := applyAcks(n.Links, acks)
	if err != nil {
		return SubDecision{Next: m, before: m}, err
	}
	n.Links = links
	d := SubDecision{Acks: slices.Clone(acks)}
	if !done {
		w := *n.Wake
		w.LeaseUntilMs = nowMs + n.LeaseMs
		n.Wake = &w
		d.Next, d.before, d.Persist = n, n, len(acks) > 0
		return d, nil
	}
	return n.finish(d, nowMs, wakeID), nil
}

// Release ends a claimed wake without acking (base protocol §7.2); the next wake (wakeID)
// follows when work remains. Errors: ErrSubFenced.
func (m SubMachine) Release(f Fence, nowMs int64, wakeID string) (SubDecision, error) {
	n, _ := m.expire(nowMs)
	if !n.current(f) {
		return SubDecision{Next: m, before: m}, ErrSubFenced
	}
	return n.finish(SubDecision{}, nowMs, wakeID), nil
}

// Delivered records the outcome of a webhook POST of wake wakeID at nowMs (base protocol
// §7.1): a 2xx resets the retry schedule and, if wakeID is still outstanding, either acks
// its snapshot tails ({"done":true}; cursors only move forward), ends it and issues the
// next one (nextID) when work remains, or marks it delivered; anything else is a failed
// attempt with the next one after the backoff (u draws the jitter). Always persisted.
func (m SubMachine) Delivered(wakeID string, ok, done bool, reason string, nowMs int64, u float64, nextID string) SubDecision {
	if !ok {
		n := m.fail(nowMs, u, reason)
		return SubDecision{Next: n, before: n, Persist: true}
	}
	n := m.succeeded()
	if n.Wake == nil || n.Wake.ID != wakeID {
		return SubDecision{Next: n, before: n, Persist: true}
	}
	if !done {
		w := *n.Wake
		w.Delivered = true
		n.Wake = &w
		return SubDecision{Next: n, before: n, Persist: true}
	}
	acks := forwardOnly(n.Links, n.Wake.Snapshot)
	n.Links, _ = applyAcks(n.Links, acks)
	return n.finish(SubDecision{Acks: acks}, nowMs, nextID)
}

// finish ends the outstanding wake of m in decision d and issues the next one if due.
func (m SubMachine) finish(d SubDecision, nowMs int64, wakeID string) SubDecision {
	m.Wake = nil
	d.before, d.Persist, d.NextWake = m, true, m.Pending()
	d.Next, d.Issued = m.issueIfDue(wakeID, nowMs)
	return d
}

// current reports whether f names the outstanding wake (B-7-06: the token's incarnation,
// generation and wake id, the body's generation and wake_id, and for a claim token a held
// wake).
func (m SubMachine) current(f Fence) bool {
	w := m.Wake
	return w != nil && f.TokenInc == m.Inc && f.TokenGen == w.Gen && f.Gen == w.Gen &&
		f.TokenWake == w.ID && f.WakeID == w.ID && (!f.Claim || w.Holder != "")
}

// applyAcks checks acks against links (§7.1, §7.2: a linked stream, not below its cursor,
// not past its tail; all or nothing) and returns a copy of links with the cursors moved.
// Errors: ErrSubAckOffset naming the stream.
func applyAcks(links []SubLink, acks []SubAck) ([]SubLink, error) {
	out := slices.Clone(links)
	for _, a := range acks {
		i, ok := findLink(out, a.Path)
		switch {
		case !ok:
			return nil, fmt.Errorf("%w: %q is not linked to this subscription", ErrSubAckOffset, a.Path)
		case a.Offset < out[i].Acked:
			return nil, fmt.Errorf("%w: %q would move back from %s", ErrSubAckOffset, a.Path, out[i].Acked)
		case a.Offset > out[i].Tail:
			return nil, fmt.Errorf("%w: %q is past the tail %s", ErrSubAckOffset, a.Path, out[i].Tail)
		}
		out[i].Acked = a.Offset
	}
	return out, nil
}

// forwardOnly are the acks of a {"done":true}: each snapshot stream at its snapshot tail,
// dropped where it would not move a linked cursor forward within its tail (a callback may
// have acked further; the stream may be gone or re-created since).
func forwardOnly(links, snap []SubLink) []SubAck {
	var out []SubAck
	for _, s := range snap {
		i, ok := findLink(links, s.Path)
		if ok && s.Tail > links[i].Acked && s.Tail <= links[i].Tail {
			out = append(out, SubAck{Path: s.Path, Offset: s.Tail})
		}
	}
	return out
}
