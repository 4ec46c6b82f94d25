package subs

import (
	"time"

	"github.com/dsd-project/dsd/model"
)

// The machine and its Store encoding: State is model.SubMachine without its links (the
// Store derives them) with times as UTC time.Time. Both directions are lossless at
// millisecond precision.

// machineOf is the model machine of s over links.
func machineOf(s Subscription, links []Link) model.SubMachine {
	st := s.State
	m := model.SubMachine{
		Type: string(s.Type), LeaseMs: s.LeaseTTL.Milliseconds(), Inc: s.Incarnation,
		Gen: st.Generation, Failed: st.Status == Failed, Retries: st.Retry.Count,
		NextMs: msOf(st.Retry.NextAttemptAt), LastError: st.Retry.LastError,
	}
	if wk := st.Wake; wk != nil {
		m.Wake = &model.SubWake{ID: wk.ID, Gen: wk.Generation, IssuedMs: msOf(wk.IssuedAt), Trigger: wk.Trigger,
			Snapshot: append([]StreamInfo(nil), wk.Snapshot...), Holder: wk.Holder,
			LeaseUntilMs: msOf(wk.LeaseUntil), Delivered: wk.Delivered}
	}
	return m.SetLinks(links)
}

// stateOf is the Store encoding of m.
func stateOf(m model.SubMachine) State {
	st := State{Generation: m.Gen, Status: Active,
		Retry: Retry{Count: m.Retries, NextAttemptAt: timeOf(m.NextMs), LastError: m.LastError}}
	if m.Failed {
		st.Status = Failed
	}
	if wk := m.Wake; wk != nil {
		st.Wake = &Wake{ID: wk.ID, Generation: wk.Gen, IssuedAt: timeOf(wk.IssuedMs), Trigger: wk.Trigger,
			Snapshot: append([]StreamInfo(nil), wk.Snapshot...), Holder: wk.Holder,
			LeaseUntil: timeOf(wk.LeaseUntilMs), Delivered: wk.Delivered}
	}
	return st
}

// msOf is t in Unix milliseconds, 0 for the zero time.
func msOf(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// timeOf is the UTC time of Unix milliseconds ms, the zero time for 0.
func timeOf(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}
