package model

import (
	"errors"
	"testing"
)

// The pull-wake lease: one holder, fencing on each of its conditions, heartbeats extend
// the lease, done acks and re-wakes, release re-wakes, lease expiry clears. Spec: B-7-01,
// B-7-05, B-7-06 (base protocol §7.2, §7.3).
func TestWakeMachinePullWake(t *testing.T) {
	var m WakeMachine
	if _, err := m.Claim("w1", "w_a", 0, 1000); !errors.Is(err, ErrSubNoPendingWork) {
		t.Fatalf("claim with nothing pending: %v", err)
	}
	m = m.Append(10)
	m, err := m.Claim("w1", "w_a", 0, 1000)
	if err != nil || m.Gen != 1 || m.Holder != "w1" || m.LeaseUntilMs != 1000 {
		t.Fatalf("claim: %+v %v", m, err)
	}
	if _, err := m.Claim("w2", "w_b", 1, 1000); !errors.Is(err, ErrSubClaimed) {
		t.Fatalf("second claim: %v", err)
	}
	ok := Fence{TokenGen: 1, Gen: 1, WakeID: "w_a", Worker: "w1"}
	for _, stale := range []Fence{{0, 1, "w_a", "w1"}, {1, 0, "w_a", "w1"}, {1, 1, "w_x", "w1"}, {1, 1, "w_a", "w2"}} {
		if _, _, err := m.Ack(stale, 5, true, 1, 1000); !errors.Is(err, ErrSubFenced) {
			t.Errorf("stale %+v: %v", stale, err)
		}
		if _, err := m.Release(stale); !errors.Is(err, ErrSubFenced) {
			t.Errorf("stale release %+v: %v", stale, err)
		}
	}
	for _, off := range []uint64{11} {
		if _, _, err := m.Ack(ok, off, false, 1, 1000); !errors.Is(err, ErrSubAckOffset) {
			t.Errorf("ack past the tail: %v", err)
		}
	}
	m, next, err := m.Ack(ok, 4, false, 500, 1000)
	if err != nil || next || m.Cursor != 4 || m.LeaseUntilMs != 1500 {
		t.Fatalf("heartbeat: %+v %v %v", m, next, err)
	}
	if _, _, err := m.Ack(ok, 3, false, 1, 1000); !errors.Is(err, ErrSubAckOffset) {
		t.Errorf("ack moving back: %v", err)
	}
	m, next, err = m.Ack(ok, 6, true, 600, 1000)
	if err != nil || !next || m.Wake != "" || m.Holder != "" {
		t.Fatalf("done with work left: %+v %v %v", m, next, err)
	}
	if _, _, err := m.Ack(ok, 6, true, 601, 1000); !errors.Is(err, ErrSubFenced) {
		t.Fatalf("repeat of a done ack: %v", err)
	}
	m, _ = m.Claim("w2", "w_b", 700, 1000)
	if m.Gen != 2 || m.Wake != "w_b" {
		t.Fatalf("second wake %+v", m)
	}
	m = m.LeaseExpired(1699)
	if m.Holder != "w2" {
		t.Fatal("lease expired early")
	}
	m = m.LeaseExpired(1700)
	if m.Holder != "" || m.Wake != "" {
		t.Fatalf("lease expiry: %+v", m)
	}
	m, _ = m.Claim("w3", "w_c", 1800, 1000)
	if m, err = m.Release(Fence{TokenGen: 3, Gen: 3, WakeID: "w_c", Worker: "w3"}); err != nil || m.Holder != "" || m.Gen != 3 {
		t.Fatalf("release: %+v %v", m, err)
	}
}

// Webhook wakes: issue needs idle, pending and the retry schedule; failures back off and
// lease expiry does not bypass the backoff. Spec: B-7-01, B-7-04 (base protocol §7.1), D10.
func TestWakeMachineWebhookRetries(t *testing.T) {
	m := WakeMachine{}.Append(5)
	m, ok := m.Issue("w_1", 0, 1000)
	if !ok || m.Gen != 1 || m.LeaseUntilMs != 1000 {
		t.Fatalf("issue: %+v", m)
	}
	if _, ok := m.Issue("w_2", 0, 1000); ok {
		t.Fatal("a second wake while one is outstanding")
	}
	m = m.Delivered(false, 100, 0.5) // next attempt at 100 + 1 s
	m = m.Delivered(false, 1100, 0.5)
	if m.Retries != 2 || m.NextMs != 3100 {
		t.Fatalf("backoff: %+v", m)
	}
	m = m.LeaseExpired(1000)
	if m.Wake != "" {
		t.Fatalf("lease expiry: %+v", m)
	}
	if _, ok := m.Issue("w_2", 3099, 1000); ok {
		t.Fatal("lease expiry bypassed the backoff")
	}
	m, ok = m.Issue("w_2", 3100, 1000)
	if !ok || m.Gen != 2 {
		t.Fatalf("re-issue: %+v", m)
	}
	m = m.Delivered(true, 3200, 0)
	f := Fence{TokenGen: 2, Gen: 2, WakeID: "w_2"}
	m, next, err := m.Ack(f, 5, true, 3200, 1000)
	if err != nil || next || m.Retries != 0 || m.Cursor != 5 {
		t.Fatalf("done: %+v %v %v", m, next, err)
	}
	if _, ok := m.Issue("w_3", 4000, 1000); ok {
		t.Fatal("a wake with nothing pending")
	}
}
