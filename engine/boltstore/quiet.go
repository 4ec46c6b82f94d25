package boltstore

import "time"

// quietWait bounds how long the checkpointer (and the zeroer, per chunk) waits for a group
// to end before it starts anyway: a log with no groups has no moment to miss.
const quietWait = 25 * time.Millisecond

// edge tells one waiter that a group of the log just ended (durable or failed): the moment
// the disk is least likely to be needed by the next group soon. The checkpointer starts
// its bbolt commit and fsyncs there instead of at a tick that falls inside a group's
// fdatasync: sharing the disk, that fdatasync took several times its usual time (issue 19,
// the fan-out and durable-append p99). The zeroer writes and syncs its chunks there too.
// A nil edge is never signalled.
type edge chan struct{}

func newEdge() edge { return make(edge, 1) }

// signal marks a group's end; it never blocks (one pending signal is enough).
func (e edge) signal() {
	select {
	case e <- struct{}{}:
	default:
	}
}

// next waits for the next group end after the call, at most max, or until stop closes.
func (e edge) next(max time.Duration, stop <-chan struct{}) {
	select {
	case <-e: // a group that ended before the call: not a fresh moment
	default:
	}
	t := time.NewTimer(max)
	defer t.Stop()
	select {
	case <-e:
	case <-t.C:
	case <-stop:
	}
}
