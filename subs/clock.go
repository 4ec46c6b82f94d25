package subs

import "time"

// systemClock is the default Clock.
type systemClock struct{}

func (systemClock) Now() time.Time                  { return time.Now() }
func (systemClock) At(t time.Time) <-chan time.Time { return time.After(time.Until(t)) }
