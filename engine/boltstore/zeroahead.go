package boltstore

import (
	"os"
	"sync"
)

// zeroChunk is what the zeroer writes at a time; DefaultZeroAhead is how far ahead of the
// active segment's end it keeps zeros.
const (
	zeroChunk              = 256 << 10
	DefaultZeroAhead int64 = 2 << 20
)

var zeros = make([]byte, zeroChunk)

// zeroer writes zeros ahead of the active segment's last record, off the commit path,
// and syncs them (size and blocks), so that a group's write overwrites blocks the file
// already has and its fdatasync flushes data only, no journal commit for a new size or
// new blocks (issue 19, BenchmarkFdatasyncFloor). Recovery reads a zero tail as the end
// of the segment. mu is held around every write to the active segment, the committer's
// and the zeroer's, so zeros never land on a record. Its failures (a full disk) are
// harmless: the committer's writes then grow the file as without it.
type zeroer struct {
	ahead  int64 // bytes kept zeroed past the last record (0: none)
	limit  int64 // no zeros past this offset (the segment size)
	noSync bool

	mu   sync.Mutex
	f    *os.File // the active segment, nil when none
	wend int64    // the end of its last record
	zend int64    // zeros are written up to here

	kick, stop, stopped chan struct{}
	ended               edge // a group ended: the moment to write and sync a chunk
}

func (z *zeroer) start() {
	z.kick, z.stop, z.stopped = make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
	z.ended = newEdge()
	go func() {
		defer close(z.stopped)
		for {
			select {
			case <-z.stop:
				return
			case <-z.kick:
			}
			for z.running() {
				z.ended.next(quietWait, z.stop) // a chunk's write and sync after a group's fdatasync, not during it
				if !z.fill() {
					break
				}
			}
		}
	}()
}

// running reports whether halt has not been asked for: a fill of several chunks stops
// between chunks, so Close waits for one chunk's write and sync at most.
func (z *zeroer) running() bool {
	select {
	case <-z.stop:
		return false
	default:
		return true
	}
}

func (z *zeroer) halt() {
	if z.stop == nil {
		return
	}
	close(z.stop)
	<-z.stopped
	z.stop = nil
}

// setFile makes f, empty, the active segment (nil: none).
func (z *zeroer) setFile(f *os.File) {
	z.mu.Lock()
	z.f, z.wend, z.zend = f, 0, 0
	z.mu.Unlock()
	z.wake()
}

// writeAt writes a record at off of the active segment and wakes the zeroer when fewer
// than half its zeros are left ahead.
func (z *zeroer) writeAt(b []byte, off int64) error {
	z.mu.Lock()
	_, err := z.f.WriteAt(b, off)
	if err == nil {
		z.wend = off + int64(len(b))
	}
	low := z.zend-z.wend < z.ahead/2
	z.mu.Unlock()
	if low {
		z.wake()
	}
	return err
}

// truncate cuts the active segment at off (a failed record) with the zeros past it.
func (z *zeroer) truncate(off int64) error {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.wend, z.zend = off, off
	return z.f.Truncate(off)
}

func (z *zeroer) wake() {
	if z.ahead <= 0 || z.kick == nil {
		return
	}
	select {
	case z.kick <- struct{}{}:
	default:
	}
}

// fill writes and syncs one chunk of zeros past the last record when fewer than ahead
// bytes are zeroed; it reports whether it did.
func (z *zeroer) fill() bool {
	z.mu.Lock()
	f, from := z.f, max(z.zend, z.wend)
	n := min(int64(zeroChunk), z.limit-from)
	if f == nil || from-z.wend >= z.ahead || n <= 0 {
		z.mu.Unlock()
		return false
	}
	_, err := f.WriteAt(zeros[:n], from)
	if err == nil {
		z.zend = from + n
	}
	z.mu.Unlock()
	if err == nil && !z.noSync {
		err = f.Sync() // the new size and blocks: a segment closed meanwhile only fails this
	}
	return err == nil
}
