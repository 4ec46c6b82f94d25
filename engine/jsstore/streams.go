package jsstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// streamConfig is partition k's JetStream stream (design §4.3): file storage, R3, no
// limit, rollups for checkpoints and bindings, a 60 s dedup window for resends, direct
// get for batched reads (bounded by a sequence known committed, see eachFrame).
func (s *Store) streamConfig(k int) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:        s.StreamName(k),
		Subjects:    []string{fmt.Sprintf("%s.%d.>", s.root, k)},
		Retention:   jetstream.LimitsPolicy,
		Storage:     jetstream.FileStorage,
		Replicas:    s.opts.Replicas,
		MaxMsgs:     -1,
		MaxBytes:    -1,
		MaxAge:      0,
		MaxMsgSize:  -1,
		Duplicates:  60 * time.Second,
		AllowRollup: true,
		DenyPurge:   false,
		DenyDelete:  false,
		AllowDirect: true,
	}
}

// ensureStream creates partition k's stream, or checks the existing one: same subjects,
// file storage, the configured replicas, and no asynchronous persistence.
func (s *Store) ensureStream(ctx context.Context, k int) error {
	want := s.streamConfig(k)
	st, err := s.js.Stream(ctx, want.Name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		st, err = s.js.CreateStream(ctx, want)
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			st, err = s.js.Stream(ctx, want.Name)
		}
	}
	if err != nil {
		return fmt.Errorf("jsstore: stream %s: %w", want.Name, err)
	}
	s.streams[k] = st
	got := st.CachedInfo().Config
	switch {
	case len(got.Subjects) != 1 || got.Subjects[0] != want.Subjects[0]:
		return fmt.Errorf("jsstore: stream %s has subjects %v, want %v", want.Name, got.Subjects, want.Subjects)
	case got.Storage != jetstream.FileStorage:
		return fmt.Errorf("jsstore: stream %s is not on file storage", want.Name)
	case got.Replicas != want.Replicas:
		return fmt.Errorf("jsstore: stream %s has %d replicas, want %d (Options.Replicas)", want.Name, got.Replicas, want.Replicas)
	case got.PersistMode == jetstream.AsyncPersistMode:
		return fmt.Errorf("%w: stream %s persists asynchronously", ErrSyncNotAlways, want.Name)
	case !got.AllowRollup || !got.AllowDirect:
		// An older layout: turn rollups and direct gets on (nothing else changes).
		got.AllowRollup, got.AllowDirect = true, true
		st, err = s.js.UpdateStream(ctx, got)
		if err != nil {
			return fmt.Errorf("jsstore: stream %s: allow rollups and direct gets: %w", want.Name, err)
		}
		s.streams[k] = st
	}
	return nil
}
