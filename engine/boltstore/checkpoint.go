package boltstore

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/dsd-project/dsd/engine/storage"
)

// checkpoint applies every logged group not yet in the data file, then extra (a group
// applied directly, under the fault hook: nil for none), in one transaction that also
// stores the log position reached; then it drops those layers and deletes the segments
// wholly below the position. Errors: the transaction's; the layers then stay and the
// next checkpoint retries them.
func (s *Store) checkpoint(extra []storage.Change) error {
	s.ckMu.Lock()
	defer s.ckMu.Unlock()
	s.mu.Lock()
	if !s.active.empty() {
		s.frozen = append(s.frozen, s.active)
		s.active = s.active.successor()
	}
	frozen, pos := s.frozen, s.active.end
	s.mu.Unlock()
	if len(frozen) == 0 && extra == nil {
		return nil
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		for _, l := range frozen {
			if err := applyGroup(tx, l.changes); err != nil {
				return err
			}
		}
		if extra != nil {
			if err := applyGroup(tx, extra); err != nil {
				return err
			}
			if f := s.fault.Load(); f != nil {
				if err := (*f)(); err != nil {
					return err
				}
			}
		}
		return tx.Bucket(bktSystem).Put(keyLogPos, pos.bytes())
	})
	if err != nil {
		if extra == nil {
			s.ckErr.Store(&err)
		}
		return err
	}
	s.ckErr.Store(nil)
	s.mu.Lock()
	s.frozen = s.frozen[len(frozen):]
	s.mu.Unlock()
	return removeBelow(s.log.dir, pos.seg)
}

// startCheckpointer runs checkpoints in the background every CheckpointInterval and
// when Commit reports CheckpointBytes logged, each right after a group ends (quiet.go).
func (s *Store) startCheckpointer() {
	s.kick, s.stop, s.stopped = make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
	s.log.ended = newEdge()
	go func() {
		defer close(s.stopped)
		var tick <-chan time.Time
		if s.opts.CheckpointInterval > 0 {
			t := time.NewTicker(s.opts.CheckpointInterval)
			defer t.Stop()
			tick = t.C
		}
		for {
			select {
			case <-s.stop:
				return
			case <-tick:
			case <-s.kick:
			}
			s.log.ended.next(quietWait, s.stop)
			_ = s.checkpoint(nil) // a failure is kept in ckErr and fails the next Commit
		}
	}()
}

func (s *Store) stopCheckpointer() {
	if s.stop == nil {
		return
	}
	close(s.stop)
	<-s.stopped
	s.stop = nil
}

// logged records a logged group in the active layer and starts a checkpoint once
// CheckpointBytes are logged.
func (s *Store) logged(group []storage.Change, end logPos, size int64) {
	s.mu.Lock()
	s.active.add(group, end, size)
	full := s.opts.CheckpointBytes > 0 && s.active.bytes >= s.opts.CheckpointBytes
	s.mu.Unlock()
	if int64(end.off) >= s.opts.SegmentBytes {
		s.log.rotate()
		s.mu.Lock()
		s.active.end = s.log.pos
		s.mu.Unlock()
	}
	if !full {
		return
	}
	if s.opts.CheckpointInline {
		_ = s.checkpoint(nil)
		return
	}
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// recover replays the log after the data file's stored position into the data file, in
// transactions of about CheckpointBytes of log each (a crash in between resumes from the
// last one's position), cutting off a torn last record, and leaves an empty log whose
// next segment follows every segment seen. A damaged log changes nothing. Errors:
// ErrLogCorrupt, IO.
func (s *Store) recover(dir string) error {
	s.log = wal{dir: filepath.Join(dir, LogDir), noSync: s.opts.NoSync,
		zero: zeroer{ahead: s.opts.ZeroAhead, limit: s.opts.SegmentBytes, noSync: s.opts.NoSync}}
	from, err := s.storedLogPos()
	if err != nil {
		return err
	}
	sc, err := scanLog(s.log.dir, from)
	if err != nil {
		return err
	}
	if sc.torn != nil {
		s.opts.Warn("boltstore: cut a group log record short at its end off the log (a commit that was never acknowledged)",
			"segment", filepath.Join(s.log.dir, segName(sc.torn.seg)), "offset", sc.torn.off, "bytes", sc.tornLen)
	}
	// Always a segment above the stored position: after a clean close the stored position
	// points into a removed segment, and a new segment of that number would be replayed
	// from that offset after a crash, skipping acknowledged groups.
	next := logPos{seg: max(from.seg, sc.last) + 1}
	s.log.pos = next
	s.active = newLayer(next)
	if sc.last == 0 && from.seg != 0 {
		return nil // no log: a clean close
	}
	bound := s.opts.CheckpointBytes
	if bound <= 0 {
		bound = DefaultCheckpointBytes
	}
	if err := replayBatches(sc.groups, bound, next, s.applyRun); err != nil {
		return fmt.Errorf("boltstore: replay the group log: %w", err)
	}
	if err := removeBelow(s.log.dir, next.seg); err != nil {
		return err
	}
	if err := os.Remove(s.log.dir); err != nil && !os.IsNotExist(err) {
		return nil // not empty: files of someone else's; harmless
	}
	return nil
}

// applyRun applies one run of replayed groups to the data file in one transaction that
// stores pos, the log position after them. Errors: IO.
func (s *Store) applyRun(batch []loggedGroup, pos logPos) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		for _, g := range batch {
			if err := applyGroup(tx, g.changes); err != nil {
				return err
			}
		}
		return tx.Bucket(bktSystem).Put(keyLogPos, pos.bytes())
	})
}

// replayBatches calls apply on consecutive runs of groups of at most bound bytes (a larger
// group is a run of its own), in order, each with the log position after its last group;
// the last run (empty when groups is) gets end instead. It stops at apply's first error.
func replayBatches(groups []loggedGroup, bound int64, end logPos, apply func([]loggedGroup, logPos) error) error {
	for {
		n, size := 0, int64(0)
		for n < len(groups) && (n == 0 || size+groups[n].size <= bound) {
			size += groups[n].size
			n++
		}
		pos := end
		if n < len(groups) {
			pos = groups[n-1].end
		}
		if err := apply(groups[:n], pos); err != nil || n == len(groups) {
			return err
		}
		groups = groups[n:]
	}
}

func (s *Store) storedLogPos() (logPos, error) {
	var p logPos
	err := s.db.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket(bktSystem).Get(keyLogPos); v != nil {
			var ok bool
			if p, ok = parseLogPos(v); !ok {
				return fmt.Errorf("%w: stored log position of %d bytes", ErrLogCorrupt, len(v))
			}
		}
		return nil
	})
	return p, err
}
