package boltstore

import (
	"errors"
	"path/filepath"

	bolt "go.etcd.io/bbolt"
)

// The layout's helpers, for the damage tests of package boltstore_test.
var (
	BktNames, BktMeta, BktData, BktRecords = bktNames, bktMeta, bktData, bktRecords
	BktSnaps, BktRcpts, BktBuckets         = bktSnaps, bktRcpts, bktBuckets
	PosKey, SidKey, U64, GetU64            = posKey, sidKey, u64, getU64
	DecodeMeta, EncodeMeta                 = decodeMeta, encodeMeta
)

// ReplayRuns replays dir's log into its data file as Open's recovery does, in runs of
// about bound bytes, but stops after runs of them, as a crash in the middle of the
// recovery would; the log stays. It returns how many runs it applied.
func ReplayRuns(dir string, bound int64, runs int) (int, error) {
	db, err := bolt.Open(filepath.Join(dir, FileName), 0o600, &bolt.Options{NoSync: true})
	if err != nil {
		return 0, err
	}
	defer db.Close()
	s := &Store{db: db}
	from, err := s.storedLogPos()
	if err != nil {
		return 0, err
	}
	sc, err := scanLog(filepath.Join(dir, LogDir), from)
	if err != nil {
		return 0, err
	}
	crash, n := errors.New("crash"), 0
	err = replayBatches(sc.groups, bound, logPos{seg: max(from.seg, sc.last) + 1}, func(b []loggedGroup, pos logPos) error {
		if n == runs {
			return crash
		}
		n++
		return s.applyRun(b, pos)
	})
	if err == crash {
		err = nil
	}
	return n, err
}

// FillZeros writes the log's zeros ahead now, as the zeroer does in the background.
func FillZeros(s *Store) {
	for s.log.zero.fill() {
	}
}
