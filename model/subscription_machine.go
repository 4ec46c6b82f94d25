package model

// Errors of the wake machine (base protocol §7; codes as the reference server's). The
// delivery worker (subs/) answers the same values.
var (
	ErrSubFenced        = newErr("FENCED", "the wake_id, generation or token is not the subscription's current wake")
	ErrSubClaimed       = newErr("ALREADY_CLAIMED", "another worker holds the lease")
	ErrSubNoPendingWork = newErr("NO_PENDING_WORK", "no linked stream has unacknowledged data")
	ErrSubAckOffset     = newErr("INVALID_OFFSET", "an ack names an unlinked stream, moves a cursor back, or passes the tail")
)

// MaxWakeSnapshot bounds a wake's snapshot and payload (design 5.4); the rest of the pending
// links stay pending for the next wake.
const MaxWakeSnapshot = 1000

// maxLastError bounds SubMachine.LastError (bytes).
const maxLastError = 200

// SubMachine is the pure delivery state of one subscription incarnation (base protocol §7,
// D10): its links with their cursors and tails, the generation, the outstanding wake, and
// the retry schedule. Times are Unix milliseconds and wake ids are given by the caller;
// every transition is a value method that returns a new machine (or a SubDecision) and
// never mutates its receiver. The delivery worker (subs/) performs these transitions and
// persists their results; the linearizability checker holds the server to them.
type SubMachine struct {
	Type    string // SubWebhook or SubPullWake
	LeaseMs int64  // lease_ttl_ms
	Inc     uint64 // the incarnation; a token of another one is fenced

	Gen       uint64   // of the latest wake issued; never decreases
	Wake      *SubWake // the outstanding wake; nil when idle
	Failed    bool     // status "failed": the last delivery attempt failed
	Retries   int      // consecutive failed attempts (webhook POSTs, wake-event appends)
	NextMs    int64    // the earliest next attempt (0: at once); lease expiry never bypasses it
	LastError string   // the last failure's reason, for operators

	Links []SubLink // sorted by path; the Store derives them (SetLinks)
}

// SubLink is one linked stream: its cursor (the inclusive acknowledged position) and its
// tail, both byte positions (D2). Pending work is Tail > Acked. The JSON tags are the
// persisted form of a wake snapshot.
type SubLink struct {
	Path     string `json:"path"`
	LinkType string `json:"link_type"` // LinkGlob or LinkExplicit
	Acked    Offset `json:"acked"`
	Tail     Offset `json:"tail"`
}

// Link types of a cursor (base protocol §6.1).
const (
	LinkGlob     = "glob"
	LinkExplicit = "explicit"
)

// SubWake is an outstanding wake. Its snapshot is fixed at issue (a claim takes a fresh
// one): webhook retries resend it, and a webhook's {"done":true} acks its tails.
type SubWake struct {
	ID           string
	Gen          uint64
	IssuedMs     int64
	Trigger      string    // the first pending path (the pull-wake event's "stream")
	Snapshot     []SubLink // pending links only, at most MaxWakeSnapshot
	Holder       string    // pull-wake: the claiming worker; "" unclaimed (webhook: always "")
	LeaseUntilMs int64     // webhook: from issue; pull-wake: from claim; 0 while none runs
	Delivered    bool      // webhook: a 2xx answered it without done; no further attempt
}

// SubAck moves the cursor of Path to Offset (inclusive position).
type SubAck struct {
	Path   string
	Offset Offset
}

// Fence is what a callback, ack or release presents (base protocol §7.3): its token's
// incarnation, generation and wake id, the body's generation and wake_id, and whether the
// token is a claim token (the wake must then be held: a wake is claimed at most once).
type Fence struct {
	TokenInc, TokenGen uint64
	TokenWake          string
	Gen                uint64
	WakeID             string
	Claim              bool
}

// SubDecision is one decision to persist in ONE commit (D10): the next machine, the cursor
// moves, and whether a wake was issued (a pull-wake wake's event is appended in the same
// commit). Persist is false when only a volatile lease moved (a heartbeat without acks,
// design 5.3). NextWake is the ack and callback reply: whether work remains, so that another
// wake follows.
type SubDecision struct {
	Next     SubMachine
	Acks     []SubAck
	Issued   bool
	Persist  bool
	NextWake bool
	before   SubMachine // Next without the issue (WakeEventFailed)
}

// Event reports whether the decision appends a pull-wake event for Next.Wake (§7.2).
func (d SubDecision) Event() bool { return d.Issued && d.Next.Type == SubPullWake }

// WakeEventFailed is the decision when the wake stream could not take the event of an
// issued pull-wake wake (missing, closed, deleted): no wake and no generation; the cursor
// moves stay; a failed attempt with its backoff (base protocol §7.2; design 5.3).
func (d SubDecision) WakeEventFailed(nowMs int64, u float64, reason string) SubDecision {
	d.Next = d.before.fail(nowMs, u, reason)
	d.Issued, d.Persist = false, true
	d.before = d.Next
	return d
}

// Pending reports whether some link has unacknowledged data (B-7-01).
func (m SubMachine) Pending() bool {
	for _, l := range m.Links {
		if l.Tail > l.Acked {
			return true
		}
	}
	return false
}

// PendingLinks returns the links with unacknowledged data, by path (a new slice).
func (m SubMachine) PendingLinks() []SubLink {
	var p []SubLink
	for _, l := range m.Links {
		if l.Tail > l.Acked {
			p = append(p, l)
		}
	}
	return p
}

// Step is the scheduler's decision at nowMs (design 5.4): a lapsed lease ends (the wake
// and holder go; the generation stays, so its tokens are fenced), then a wake is issued
// when idle, pending and the retry schedule allows (B-7-01; D10: lease expiry never
// bypasses the backoff). wakeID is used when a wake is issued.
func (m SubMachine) Step(wakeID string, nowMs int64) SubDecision {
	n, expired := m.expire(nowMs)
	d := SubDecision{Next: n, before: n, Persist: expired}
	if n.Wake == nil && n.Pending() && nowMs >= n.NextMs {
		d.Next, d.Issued, d.Persist = n.issue(wakeID, nowMs), true, true
	}
	return d
}

// AttemptDue reports whether the outstanding webhook wake is to be POSTed now: not yet
// answered with a 2xx and not before the retry schedule (base protocol §7.1).
func (m SubMachine) AttemptDue(nowMs int64) bool {
	return m.Type == SubWebhook && m.Wake != nil && !m.Wake.Delivered && nowMs >= m.NextMs
}

// NextDueMs is the earliest time after nowMs at which Step or AttemptDue would decide
// something without any other input (a lease deadline, the end of a backoff), or 0.
func (m SubMachine) NextDueMs(nowMs int64) int64 {
	var due int64
	consider := func(t int64) {
		if t > nowMs && (due == 0 || t < due) {
			due = t
		}
	}
	if w := m.Wake; w != nil {
		consider(w.LeaseUntilMs)
		if m.Type == SubWebhook && !w.Delivered {
			consider(m.NextMs)
		}
	} else if m.Pending() {
		consider(m.NextMs)
	}
	return due
}

// Restart is the machine after a restart at nowMs: every running lease restarts in full,
// so a restart never fences a live worker early (design 5.3: heartbeats are not persisted).
func (m SubMachine) Restart(nowMs int64) SubMachine {
	if m.Wake != nil && m.Wake.LeaseUntilMs != 0 {
		w := *m.Wake
		w.LeaseUntilMs = nowMs + m.LeaseMs
		m.Wake = &w
	}
	return m
}

// KeepLease returns m (a machine reloaded from storage) with the lease deadline of mirror
// (the in-memory machine) when both have the same wake with the same holder: a heartbeat
// moves the deadline without a commit (design 5.3).
func (m SubMachine) KeepLease(mirror SubMachine) SubMachine {
	a, b := m.Wake, mirror.Wake
	if a == nil || b == nil || a.ID != b.ID || a.Gen != b.Gen || a.Holder != b.Holder || b.LeaseUntilMs <= a.LeaseUntilMs {
		return m
	}
	w := *a
	w.LeaseUntilMs = b.LeaseUntilMs
	m.Wake = &w
	return m
}

// expire ends a lease that ran out by nowMs (base protocol §7.3).
func (m SubMachine) expire(nowMs int64) (SubMachine, bool) {
	if m.Wake == nil || m.Wake.LeaseUntilMs == 0 || nowMs < m.Wake.LeaseUntilMs {
		return m, false
	}
	m.Wake = nil
	return m, true
}

// issue starts wake wakeID (generation + 1) over the pending links. A webhook lease runs
// from issue; a pull-wake wake is issued with its event, which counts as a delivered
// attempt (the retry schedule resets).
func (m SubMachine) issue(wakeID string, nowMs int64) SubMachine {
	p := m.PendingLinks()
	m.Gen++
	w := &SubWake{ID: wakeID, Gen: m.Gen, IssuedMs: nowMs, Trigger: p[0].Path, Snapshot: wakeSnapshot(p)}
	if m.Type == SubWebhook {
		w.LeaseUntilMs = nowMs + m.LeaseMs
	} else {
		m = m.succeeded()
	}
	m.Wake = w
	return m
}

// issueIfDue issues the next wake when idle, pending and the retry schedule allows.
func (m SubMachine) issueIfDue(wakeID string, nowMs int64) (SubMachine, bool) {
	if m.Wake == nil && m.Pending() && nowMs >= m.NextMs {
		return m.issue(wakeID, nowMs), true
	}
	return m, false
}

// succeeded resets the retry schedule (status active).
func (m SubMachine) succeeded() SubMachine {
	m.Failed, m.Retries, m.NextMs, m.LastError = false, 0, 0, ""
	return m
}

// fail records one more failed attempt: status failed, the next attempt after
// Backoff(retries, u) (base protocol §7.1; D10).
func (m SubMachine) fail(nowMs int64, u float64, reason string) SubMachine {
	m.Failed = true
	m.Retries++
	m.NextMs = nowMs + Backoff(m.Retries, u).Milliseconds()
	if len(reason) > maxLastError {
		reason = reason[:maxLastError]
	}
	m.LastError = reason
	return m
}

// wakeSnapshot copies at most MaxWakeSnapshot pending links.
func wakeSnapshot(p []SubLink) []SubLink {
	if len(p) > MaxWakeSnapshot {
		p = p[:MaxWakeSnapshot]
	}
	return append([]SubLink(nil), p...)
}
