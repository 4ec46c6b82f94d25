package model

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
)

func pullMachine(links ...SubLink) SubMachine {
	return SubMachine{Type: SubPullWake, LeaseMs: 1000, Inc: 7}.SetLinks(links)
}

func claimFence(m SubMachine) Fence {
	return Fence{TokenInc: m.Inc, TokenGen: m.Wake.Gen, TokenWake: m.Wake.ID, Gen: m.Wake.Gen, WakeID: m.Wake.ID, Claim: true}
}

// The pull-wake lease: one holder, fencing on each of its conditions, heartbeats extend
// the lease, done acks and re-wakes, release re-wakes, lease expiry clears. Spec: B-7-01,
// B-7-05, B-7-06 (base protocol §7.2, §7.3).
func TestSubMachinePullWake(t *testing.T) {
	m := pullMachine(SubLink{Path: "a", LinkType: LinkGlob})
	if _, err := m.Claim("w1", "w_a", 0); !errors.Is(err, ErrSubNoPendingWork) {
		t.Fatalf("claim with nothing pending: %v", err)
	}
	m = m.Append("a", 10)
	d, err := m.Claim("w1", "w_a", 0)
	if err != nil || !d.Issued || !d.Event() || !d.Persist || d.Next.Gen != 1 || d.Next.Wake.Holder != "w1" || d.Next.Wake.LeaseUntilMs != 1000 {
		t.Fatalf("claim: %+v %v", d, err)
	}
	m = d.Next
	if _, err := m.Claim("w2", "w_b", 1); !errors.Is(err, ErrSubClaimed) {
		t.Fatalf("second claim: %v", err)
	}
	ok := claimFence(m)
	stale := []Fence{ok, ok, ok, ok, ok, ok}
	stale[0].TokenInc = 6
	stale[1].TokenGen = 0
	stale[2].Gen = 2
	stale[3].TokenWake = "w_x"
	stale[4].WakeID = "w_x"
	stale[5].Claim, stale[5].TokenGen, stale[5].Gen = true, 9, 9
	for _, f := range stale {
		if _, err := m.Ack(f, []SubAck{{"a", 5}}, true, 1, "w_n"); !errors.Is(err, ErrSubFenced) {
			t.Errorf("stale %+v: %v", f, err)
		}
		if _, err := m.Release(f, 1, "w_n"); !errors.Is(err, ErrSubFenced) {
			t.Errorf("stale release %+v: %v", f, err)
		}
	}
	for _, a := range []SubAck{{"a", 11}, {"b", 1}} {
		if _, err := m.Ack(ok, []SubAck{a}, false, 1, ""); !errors.Is(err, ErrSubAckOffset) {
			t.Errorf("ack %+v: %v", a, err)
		}
	}
	d, err = m.Ack(ok, []SubAck{{"a", 4}}, false, 500, "")
	if err != nil || d.NextWake || !d.Persist || d.Next.Links[0].Acked != 4 || d.Next.Wake.LeaseUntilMs != 1500 {
		t.Fatalf("heartbeat: %+v %v", d, err)
	}
	m = d.Next
	if d, err := m.Ack(ok, nil, false, 600, ""); err != nil || d.Persist || d.Next.Wake.LeaseUntilMs != 1600 {
		t.Fatalf("a heartbeat without acks is volatile: %+v %v", d, err)
	}
	if _, err := m.Ack(ok, []SubAck{{"a", 3}}, false, 1, ""); !errors.Is(err, ErrSubAckOffset) {
		t.Errorf("ack moving back: %v", err)
	}
	d, err = m.Ack(ok, []SubAck{{"a", 6}}, true, 600, "w_b")
	if err != nil || !d.NextWake || !d.Issued || d.Next.Wake.ID != "w_b" || d.Next.Gen != 2 || d.Next.Wake.Holder != "" {
		t.Fatalf("done with work left: %+v %v", d, err)
	}
	m = d.Next
	if _, err := m.Ack(ok, nil, true, 601, ""); !errors.Is(err, ErrSubFenced) {
		t.Fatalf("repeat of a done ack: %v", err)
	}
	d, _ = m.Claim("w2", "w_unused", 700)
	if d.Issued || d.Next.Gen != 2 || d.Next.Wake.ID != "w_b" || d.Next.Wake.Snapshot[0].Acked != 6 {
		t.Fatalf("claim of the outstanding wake %+v", d)
	}
	m = d.Next
	if d, err := m.Ack(claimFence(m), nil, false, 1700, ""); !errors.Is(err, ErrSubFenced) || d.Persist {
		t.Fatalf("a heartbeat after the lease lapsed: %v", err)
	}
	if n := m.Step("w_c", 1699); n.Persist || n.Next.Wake.Holder != "w2" {
		t.Fatal("lease expired early")
	}
	st := m.Step("w_c", 1700)
	if !st.Persist || !st.Issued || st.Next.Gen != 3 || st.Next.Wake.Holder != "" {
		t.Fatalf("lease expiry re-wakes: %+v", st)
	}
	m = st.Next
	d, _ = m.Claim("w3", "", 1800)
	m = d.Next
	if d, err = m.Release(claimFence(m), 1900, "w_d"); err != nil || !d.Issued || d.Next.Gen != 4 || d.Acks != nil {
		t.Fatalf("release with work left: %+v %v", d, err)
	}
}

// A pull-wake claim whose work went away withdraws the unclaimed wake, so later work wakes
// again; a wake event that cannot be appended issues nothing and backs off. Spec: B-7-05.
func TestSubMachineWithdrawAndWakeEventFailure(t *testing.T) {
	m := pullMachine(SubLink{Path: "a", Tail: 3})
	st := m.Step("w_1", 0)
	if !st.Event() {
		t.Fatalf("step: %+v", st)
	}
	failed := st.WakeEventFailed(0, 0.5, "gone")
	if failed.Next.Wake != nil || failed.Next.Gen != 0 || !failed.Next.Failed || failed.Next.NextMs != 1000 || failed.Event() {
		t.Fatalf("event failure: %+v", failed.Next)
	}
	if again := failed.Next.Step("w_2", 999); again.Issued {
		t.Fatal("issued before the backoff")
	}
	if d, err := failed.Next.Claim("w", "w_2", 10); err != nil || !d.Issued {
		t.Fatalf("a claim issues whatever the schedule: %+v %v", d, err)
	}
	m = st.Next.SetLinks([]SubLink{{Path: "a", Tail: 3, Acked: 3}})
	d, err := m.Claim("w", "w_9", 5)
	if !errors.Is(err, ErrSubNoPendingWork) || !d.Persist || d.Next.Wake != nil || d.Next.Gen != 1 {
		t.Fatalf("withdraw: %+v %v", d, err)
	}
}

// Webhook wakes: failures back off, lease expiry does not bypass the backoff, a 2xx resets
// it, done acks exactly the snapshot (forward only) and re-wakes for later data, a 2xx
// without done stops further attempts. Spec: B-7-01, B-7-03, B-7-04 (§7.1), D10.
func TestSubMachineWebhook(t *testing.T) {
	m := SubMachine{Type: SubWebhook, LeaseMs: 1000}.SetLinks([]SubLink{{Path: "b", Tail: 2}, {Path: "a", Tail: 5}})
	d := m.Step("w_1", 0)
	m = d.Next
	if !d.Issued || d.Event() || m.Gen != 1 || m.Wake.LeaseUntilMs != 1000 || m.Wake.Trigger != "a" || len(m.Wake.Snapshot) != 2 || !m.AttemptDue(0) {
		t.Fatalf("issue: %+v", m)
	}
	m = m.Delivered("w_1", false, false, "500", 100, 0.5, "").Next // next attempt at 1100
	m = m.Delivered("w_1", false, false, "500", 1100, 0.5, "").Next
	if m.Retries != 2 || m.NextMs != 3100 || !m.Failed || m.AttemptDue(3099) || !m.AttemptDue(3100) {
		t.Fatalf("backoff: %+v", m)
	}
	if due := m.NextDueMs(1100); due != 3100 {
		t.Fatalf("next due %d", due)
	}
	st := m.Step("w_2", 1500) // lease lapsed at 1000
	if !st.Persist || st.Issued || st.Next.Wake != nil || st.Next.NextDueMs(1500) != 3100 {
		t.Fatalf("lease expiry bypassed the backoff: %+v", st)
	}
	m = st.Next.Step("w_2", 3100).Next
	if m.Gen != 2 || m.Wake.ID != "w_2" {
		t.Fatalf("re-issue: %+v", m)
	}
	m = m.Append("a", 9) // after the snapshot
	// A callback acked a further than the snapshot; done must not move it back.
	f := Fence{TokenGen: 2, Gen: 2, TokenWake: "w_2", WakeID: "w_2"}
	m = must(m.Ack(f, []SubAck{{"b", 2}}, false, 3150, "")).Next
	d = m.Delivered("w_2", true, true, "", 3200, 0, "w_3")
	if !reflect.DeepEqual(d.Acks, []SubAck{{"a", 5}}) || !d.Issued || d.Next.Retries != 0 || d.Next.Failed || d.Next.Wake.Snapshot[0] != (SubLink{Path: "a", Acked: 5, Tail: 9}) {
		t.Fatalf("done: %+v", d)
	}
	m = d.Next.Delivered("w_3", true, false, "", 3300, 0, "").Next
	if !m.Wake.Delivered || m.AttemptDue(3300) || m.NextDueMs(3300) != 4200 {
		t.Fatalf("delivered without done: %+v", m.Wake)
	}
	if d := m.Delivered("w_old", true, true, "", 3400, 0, "w_x"); d.Issued || d.Acks != nil || d.Next.Wake.ID != "w_3" {
		t.Fatalf("a late answer for an older wake: %+v", d)
	}
}

// The snapshot lists pending links only, by path, capped at MaxWakeSnapshot; the rest stay
// pending. Restart gives running leases a full TTL; KeepLease keeps a heartbeat's deadline.
func TestSubMachineSnapshotRestartKeepLease(t *testing.T) {
	var links []SubLink
	for i := MaxWakeSnapshot + 4; i >= 0; i-- {
		links = append(links, SubLink{Path: fmt.Sprintf("s/%05d", i), Tail: 1})
	}
	links[len(links)-4].Tail = 0 // s/00003 not pending
	m := SubMachine{Type: SubWebhook, LeaseMs: 1000}.SetLinks(links)
	w := m.Step("w_1", 0).Next.Wake
	if len(w.Snapshot) != MaxWakeSnapshot || w.Snapshot[3].Path != "s/00004" || w.Trigger != "s/00000" {
		t.Fatalf("snapshot of %d, [3] %s", len(w.Snapshot), w.Snapshot[3].Path)
	}
	m = m.Step("w_1", 0).Next
	r := m.Restart(5000)
	if r.Wake.LeaseUntilMs != 6000 || m.Wake.LeaseUntilMs != 1000 {
		t.Fatalf("restart: %d (original %d)", r.Wake.LeaseUntilMs, m.Wake.LeaseUntilMs)
	}
	if k := m.KeepLease(r); k.Wake.LeaseUntilMs != 6000 {
		t.Fatalf("keep lease %d", k.Wake.LeaseUntilMs)
	}
	other := m.Step("w_1", 2000).Next // expired and re-issued: another wake
	if k := other.KeepLease(r); k.Wake.LeaseUntilMs != other.Wake.LeaseUntilMs {
		t.Fatal("a lease kept across wakes")
	}
}

// Transitions never mutate their receiver (the porcupine model relies on it).
func TestSubMachineTransitionsArePure(t *testing.T) {
	m := pullMachine(SubLink{Path: "a", Tail: 4}, SubLink{Path: "b", Tail: 2})
	m = must(m.Claim("w", "w_1", 0)).Next
	before := fmt.Sprintf("%+v %+v", m, *m.Wake)
	_, _ = m.Ack(claimFence(m), []SubAck{{"a", 4}, {"b", 1}}, true, 1, "w_2")
	_, _ = m.Ack(claimFence(m), []SubAck{{"a", 4}}, false, 1, "")
	_, _ = m.Release(claimFence(m), 1, "w_2")
	_ = m.Step("w_2", 5000)
	_ = m.Append("a", 9)
	_ = m.Restart(9)
	if after := fmt.Sprintf("%+v %+v", m, *m.Wake); after != before {
		t.Fatalf("mutated:\n%s\n%s", before, after)
	}
}

func must(d SubDecision, err error) SubDecision {
	if err != nil {
		panic(err)
	}
	return d
}
