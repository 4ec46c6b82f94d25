package subs

import (
	"container/heap"
	"sync"
	"time"
)

// schedule is the set of due times of subscription steps: a min-heap with lazy deletion
// (an entry counts only while it equals its key's earliest due time). Steps are level
// triggered, so an extra step is harmless and a later request never delays an earlier one.
type schedule struct {
	mu   sync.Mutex
	h    dueHeap
	due  map[Key]time.Time
	kick chan struct{}
	busy int // steps popped and webhook attempts started that have not ended yet
}

type dueEntry struct {
	at  time.Time
	key Key
}

type dueHeap []dueEntry

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h dueHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *dueHeap) Push(x any)        { *h = append(*h, x.(dueEntry)) }
func (h *dueHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

func newSchedule() *schedule {
	return &schedule{due: map[Key]time.Time{}, kick: make(chan struct{}, 1)}
}

// at asks for a step of k at t (or earlier, if one is already due earlier).
func (s *schedule) at(k Key, t time.Time) {
	s.mu.Lock()
	if cur, ok := s.due[k]; ok && !t.Before(cur) {
		s.mu.Unlock()
		return
	}
	s.due[k] = t
	heap.Push(&s.h, dueEntry{at: t, key: k})
	s.mu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// popDue removes and returns the keys due at now, and the time of the next due entry
// (zero when none).
func (s *schedule) popDue(now time.Time) (keys []Key, next time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.h.Len() > 0 {
		e := s.h[0]
		if cur, ok := s.due[e.key]; !ok || !cur.Equal(e.at) {
			heap.Pop(&s.h) // stale
			continue
		}
		if e.at.After(now) {
			return keys, e.at
		}
		heap.Pop(&s.h)
		delete(s.due, e.key)
		keys = append(keys, e.key)
		if e.key != (Key{}) {
			s.busy++ // counted here, with the pop, so that no moment looks idle
		}
	}
	return keys, time.Time{}
}

// begin counts a webhook attempt as work in progress; end ends a step or an attempt, after
// it scheduled whatever follows it.
func (s *schedule) begin() { s.mu.Lock(); s.busy++; s.mu.Unlock() }
func (s *schedule) end()   { s.mu.Lock(); s.busy--; s.mu.Unlock() }

// idle reports whether nothing is due at now and no step or attempt is running (tests
// wait for it: the worker has then done everything it will do until the next input).
func (s *schedule) idle(now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy > 0 {
		return false
	}
	for k, t := range s.due {
		if k != (Key{}) && !t.After(now) {
			return false
		}
	}
	return true
}
