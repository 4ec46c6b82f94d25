package httpd

import "sync/atomic"

// byteBudget is a global limit on bytes held for one purpose (request bodies in flight):
// callers take bytes before they hold them and give them back after. A zero limit means
// no limit.
type byteBudget struct {
	limit int64
	used  atomic.Int64
}

// take reserves n bytes; false (and nothing reserved) when that would pass the limit.
func (b *byteBudget) take(n int64) bool {
	if b.used.Add(n) > b.limit && b.limit > 0 {
		b.used.Add(-n)
		return false
	}
	return true
}

// give returns n bytes taken before.
func (b *byteBudget) give(n int64) { b.used.Add(-n) }

// inUse reports the bytes currently taken.
func (b *byteBudget) inUse() int64 { return b.used.Load() }
