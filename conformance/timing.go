package conformance

import (
	"fmt"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
)

// Timing-dependent checks. A spec that must see a long-poll woken by an append, or an
// answer "at once", can be defeated by a loaded machine (a request that takes longer than
// the server's long-poll timeout to arrive) without any server fault. Such specs run
// their check as an attempt that reports a timing miss, and fail only after three misses
// in a row: a server that never wakes waiters, or always waits, misses every time.

// attempts is how many timing misses in a row fail a spec.
const attempts = 3

// tryTimed runs attempt until it reports no miss, at most `attempts` times, and fails
// the spec with the misses otherwise. attempt returns "" on success or a description of
// the miss; any other discrepancy it fails directly (with Expect).
func (s *S) tryTimed(attempt func() (miss string)) {
	ginkgo.GinkgoHelper()
	var misses []string
	for i := 0; i < attempts; i++ {
		miss := attempt()
		if miss == "" {
			return
		}
		misses = append(misses, fmt.Sprintf("#%d: %s", i+1, miss))
	}
	ginkgo.Fail(fmt.Sprintf("timing-dependent check missed %d times in a row (a loaded machine misses once, not every time):\n%s",
		attempts, strings.Join(misses, "\n")))
}

// wakeDelay is how long a spec lets a live request settle before it appends: short
// against the server's long-poll timeout, so the append lands while the request waits.
func (s *S) wakeDelay() time.Duration {
	d := s.LongPollTimeout() / 4
	if d > 200*time.Millisecond {
		d = 200 * time.Millisecond
	}
	return d
}

// immediate is the bound for answers that must not wait: half the long-poll timeout.
func (s *S) immediate() time.Duration { return s.LongPollTimeout() / 2 }

// slowMiss reports a miss when a response that must come at once took immediate() or
// longer.
func (s *S) slowMiss(r *Response, what string) string {
	if r.Elapsed >= s.immediate() {
		return fmt.Sprintf("%s took %s (must not wait; bound %s)", what, r.Elapsed.Round(time.Millisecond), s.immediate())
	}
	return ""
}
