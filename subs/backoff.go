package subs

import "time"

// Backoff schedule of failed deliveries (PROTOCOL §7.1; D10): 1 s doubling up to 60 s.
const (
	backoffBase = time.Second
	backoffMax  = 60 * time.Second
)

// Backoff returns the delay before the next attempt after the attempt-th consecutive
// failure (attempt >= 1): min(1 s · 2^(attempt-1), 60 s) · (1 + jitter), where u ∈ [0,1)
// draws jitter uniformly in [-0.2, +0.2). Pure; the caller supplies u.
func Backoff(attempt int, u float64) time.Duration {
	d := backoffMax
	if attempt < 1 {
		attempt = 1
	}
	if attempt <= 7 { // 2^6 s = 64 s already exceeds the cap
		d = min(backoffBase<<(attempt-1), backoffMax)
	}
	return time.Duration(float64(d) * (0.8 + 0.4*u))
}
