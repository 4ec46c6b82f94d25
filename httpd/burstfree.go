package httpd

import (
	"runtime/debug"
	"sync"
	"time"
)

// burstFree returns a connect burst's garbage to the OS once the burst is over (issue 19:
// 10,000 idle SSE subscribers in <= 1 KiB of RSS each). Each new SSE subscriber leaves
// several KiB of garbage behind (net/http's 4 KiB bufio reader and writer, which a hijack
// does not give back to net/http's pools, the request's parsing, the catch-up read) and
// keeps about 600 bytes; the heap grows with the garbage and the runtime's background
// scavenger gives the free pages back only slowly, so RSS stays near the burst's
// high-water mark. After at least minJoins parked subscribers and quiet without a new one,
// it runs one forced GC and scavenge (debug.FreeOSMemory). That is at most one GC cycle
// per minJoins new subscribers, whose connects cost the runtime several cycles already.
type burstFree struct {
	minJoins int
	quiet    time.Duration
	free     func()

	mu     sync.Mutex
	joins  int  // since the last free
	tail   bool // the last free followed minJoins joins: the burst's tail is freed with fewer
	timer  *time.Timer
	closed bool
}

func newBurstFree() *burstFree {
	return &burstFree{minJoins: 1000, quiet: 300 * time.Millisecond, free: debug.FreeOSMemory}
}

// joined counts a subscriber parked in a hub; from minJoins on, each one pushes the free
// back by quiet. After a free of minJoins or more, any join does: a burst slowed by a pause
// longer than quiet (a loaded machine) then gets its tail freed too, once; a trickle of
// subscribers costs at most two frees per minJoins of them.
func (b *burstFree) joined() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.joins++
	if (b.joins < b.minJoins && !b.tail) || b.closed {
		return
	}
	if b.timer == nil {
		b.timer = time.AfterFunc(b.quiet, b.fire)
		return
	}
	b.timer.Reset(b.quiet)
}

func (b *burstFree) fire() {
	b.mu.Lock()
	if b.closed || b.joins == 0 || (b.joins < b.minJoins && !b.tail) {
		b.mu.Unlock()
		return
	}
	b.tail = b.joins >= b.minJoins
	b.joins = 0
	b.mu.Unlock()
	b.free()
}

// stop cancels a pending free.
func (b *burstFree) stop() {
	b.mu.Lock()
	b.closed = true
	if b.timer != nil {
		b.timer.Stop()
	}
	b.mu.Unlock()
}
