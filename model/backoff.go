package model

import "time"

// Webhook retry schedule (base protocol §7.1; D10): 1 s doubling up to 60 s, ±20 % jitter.
const (
	BackoffBase = time.Second
	BackoffMax  = 60 * time.Second
)

// Backoff is the delay before the next attempt after the attempt-th consecutive failure
// (attempt >= 1; lower counts as 1): min(1 s · 2^(attempt-1), 60 s) · (0.8 + 0.4·u), u in
// [0,1) drawn by the caller (so the jitter is uniform in [-20 %, +20 %)). Pure.
func Backoff(attempt int, u float64) time.Duration {
	d := BackoffMax
	if attempt < 1 {
		attempt = 1
	}
	if attempt <= 7 {
		d = min(BackoffBase<<(attempt-1), BackoffMax)
	}
	return time.Duration(float64(d) * (0.8 + 0.4*u))
}
