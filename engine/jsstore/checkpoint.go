package jsstore

import (
	"encoding/json"
	"fmt"
)

// maybeCheckpoint rewrites sid's checkpoint when enough log has grown since the last.
func (s *Store) maybeCheckpoint(k int, sid uint64) {
	s.mu.RLock()
	_, in := s.lookup(sid)
	due := in != nil && (in.sinceFrames >= s.opts.CheckpointFrames || in.sinceBytes >= s.opts.CheckpointBytes)
	s.mu.RUnlock()
	if due {
		_ = s.writeCheckpoint(k, sid) // derived: a failed one is retried at the next commit
	}
}

// writeCheckpoint publishes the fold of sid's log up to its last frame on the
// checkpoint subject, rolling up the previous one. commitMu is held.
func (s *Store) writeCheckpoint(k int, sid uint64) error {
	s.mu.RLock()
	_, in := s.lookup(sid)
	if in == nil {
		s.mu.RUnlock()
		return nil
	}
	data, err := json.Marshal(in)
	s.mu.RUnlock()
	if err != nil {
		return err
	}
	if len(data) > s.opts.ChunkBytes {
		return fmt.Errorf("jsstore: checkpoint of stream id %d is %d bytes, above %d", sid, len(data), s.opts.ChunkBytes)
	}
	if _, err := s.publish(pub{k: k, subj: s.logSubj(k, sid) + ".m", data: data, rollup: true}); err != nil {
		return err
	}
	s.mu.Lock()
	in.sinceFrames, in.sinceBytes = 0, 0
	s.mu.Unlock()
	return nil
}
