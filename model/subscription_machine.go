package model

// Errors of the wake machine (base protocol §7; codes as the reference server's). The
// delivery worker (subs/) answers the same codes.
var (
	ErrSubFenced        = newErr("FENCED", "the wake_id, generation or token is not the subscription's current wake")
	ErrSubClaimed       = newErr("ALREADY_CLAIMED", "another worker holds the lease")
	ErrSubNoPendingWork = newErr("NO_PENDING_WORK", "no linked stream has unacknowledged data")
	ErrSubAckOffset     = newErr("INVALID_OFFSET", "an ack moves a cursor back or past the tail")
)

// WakeMachine is the pure wake state of one subscription over one linked stream (base
// protocol §7, D10): generation, the outstanding wake and its holder, the lease, the
// cursor and tail, and the retry schedule. Times are Unix milliseconds given by the
// caller; wake ids are given too. Every transition returns the next state and changes
// nothing on error. The delivery worker implements the same rules over many links; the
// linearizability checker holds the server to this machine.
type WakeMachine struct {
	Gen          uint64 // of the latest wake issued; never decreases
	Wake         string // the outstanding wake id ("" when idle)
	Holder       string // pull-wake: the claiming worker ("" unclaimed)
	LeaseUntilMs int64  // 0 while no lease runs
	Cursor, Tail uint64 // the acknowledged position and the stream's tail
	Retries      int    // consecutive failed deliveries
	NextMs       int64  // the earliest next delivery attempt (0: at once)
}

// Fence is what a callback, ack or release presents (base protocol §7.3): the generation
// of its token, the body's generation and wake_id, and (pull-wake) the worker the token
// was issued to.
type Fence struct {
	TokenGen, Gen uint64
	WakeID        string
	Worker        string
}

// Pending reports whether the stream has unacknowledged data (B-7-01).
func (m WakeMachine) Pending() bool { return m.Tail > m.Cursor }

// Append moves the tail to tail (the stream's new tail; never backwards).
func (m WakeMachine) Append(tail uint64) WakeMachine {
	m.Tail = max(m.Tail, tail)
	return m
}

// Issue starts a wake with a fresh id when idle, pending and not before the retry schedule
// allows (B-7-01; D10: lease expiry never bypasses the backoff). ok is false when no wake
// may start now. A webhook lease runs from issue (leaseMs > 0); pull-wake passes 0.
func (m WakeMachine) Issue(wakeID string, nowMs, leaseMs int64) (WakeMachine, bool) {
	if m.Wake != "" || !m.Pending() || nowMs < m.NextMs {
		return m, false
	}
	m.Gen++
	m.Wake, m.Holder = wakeID, ""
	m.LeaseUntilMs = 0
	if leaseMs > 0 {
		m.LeaseUntilMs = nowMs + leaseMs
	}
	return m, true
}

// Claim gives the lease to worker (base protocol §7.2), issuing a wake (wakeID) first
// when none is outstanding. Errors: ErrSubClaimed (a holder exists), ErrSubNoPendingWork.
func (m WakeMachine) Claim(worker, wakeID string, nowMs, leaseMs int64) (WakeMachine, error) {
	if m.Holder != "" {
		return m, ErrSubClaimed
	}
	if !m.Pending() {
		return m, ErrSubNoPendingWork
	}
	if m.Wake == "" {
		m.Gen++
		m.Wake = wakeID
	}
	m.Holder, m.LeaseUntilMs = worker, nowMs+leaseMs
	return m, nil
}

// current reports whether f names the outstanding wake (B-7-06: token generation, body
// generation and wake id, and for pull-wake the holder).
func (m WakeMachine) current(f Fence) bool {
	return m.Wake != "" && f.WakeID == m.Wake && f.Gen == m.Gen && f.TokenGen == m.Gen &&
		(f.Worker == "" || f.Worker == m.Holder)
}

// Ack applies an ack at offset (inclusive position) under fence f (base protocol §7.1
// callback, §7.2 ack): without done it is a heartbeat that extends the lease; with done
// it releases the wake. nextWake says whether work remains (another wake follows).
// Errors: ErrSubFenced, ErrSubAckOffset.
func (m WakeMachine) Ack(f Fence, offset uint64, done bool, nowMs, leaseMs int64) (WakeMachine, bool, error) {
	if !m.current(f) {
		return m, false, ErrSubFenced
	}
	if offset < m.Cursor || offset > m.Tail {
		return m, false, ErrSubAckOffset
	}
	m.Cursor = offset
	if !done {
		m.LeaseUntilMs = nowMs + leaseMs
		return m, false, nil
	}
	m.Wake, m.Holder, m.LeaseUntilMs = "", "", 0
	return m, m.Pending(), nil
}

// Release ends a claimed wake without acking (base protocol §7.2); work that remains
// wakes again. Errors: ErrSubFenced.
func (m WakeMachine) Release(f Fence) (WakeMachine, error) {
	if !m.current(f) {
		return m, ErrSubFenced
	}
	m.Wake, m.Holder, m.LeaseUntilMs = "", "", 0
	return m, nil
}

// LeaseExpired clears a lease that ran out by nowMs (base protocol §7.3): the holder and
// the wake go; a new wake follows through Issue, so it still waits for NextMs.
func (m WakeMachine) LeaseExpired(nowMs int64) WakeMachine {
	if m.LeaseUntilMs != 0 && nowMs >= m.LeaseUntilMs {
		m.Wake, m.Holder, m.LeaseUntilMs = "", "", 0
	}
	return m
}

// Delivered records a webhook attempt's outcome (base protocol §7.1): success resets the
// retry count (a done reply then acks the wake's snapshot tail through Ack); failure
// schedules the next attempt after Backoff(retries, u).
func (m WakeMachine) Delivered(ok bool, nowMs int64, u float64) WakeMachine {
	if ok {
		m.Retries, m.NextMs = 0, 0
		return m
	}
	m.Retries++
	m.NextMs = nowMs + Backoff(m.Retries, u).Milliseconds()
	return m
}
