package subs

import "github.com/dsd-project/dsd/model"

// Backoff is the retry schedule of failed deliveries, model.Backoff (PROTOCOL §7.1; D10):
// min(1 s · 2^(attempt-1), 60 s) · (0.8 + 0.4·u), u in [0,1) drawn by the caller.
var Backoff = model.Backoff
