// Package boltstore is dsd's default storage backend (storage.Backend): a group log in
// front of one bbolt file. schema.go is the data file's layout (format dsd-2).
//
// A commit group of appends (messages, record index entries, producer states and
// receipts, metas) is one record appended to the group log, LogDir: segment files
// "dsd.log/000000000001.seg", ... each a sequence of records framed by length and
// CRC-32C (logcodec.go). One write(2) and one fdatasync per group is the durability point
// (D4); zeros kept synced ahead of the last record (zeroahead.go) make that fdatasync a
// flush of data only, and zeros after a segment's last record are its end. The
// checkpointer then applies every group logged since its last run to the data file in
// one bbolt transaction, together with the log position it reached
// (system "log_pos"), and deletes the segments wholly below it: bbolt's page writes are
// paid once per checkpoint, not per group. Until then the groups live in memory as
// layers (overlay.go) that every read merges with the data file, so reads see every
// committed group. A group with any other change (create, delete, snapshot, retention,
// bucket, subscription records) is applied to the data file directly, in the same
// transaction as a checkpoint of everything logged before it.
//
// Open replays the log after the stored position into the data file, in transactions of
// about CheckpointBytes of log each. A record cut short at the very end of the last
// segment is a group whose sync never returned (never acknowledged): it is cut off with a
// warning. A damaged record followed by more data, or a segment shorter than the stored
// position, is ErrLogCorrupt and Open refuses the directory (CheckFile reports it too).
// Close and Backup checkpoint first; a cleanly closed store leaves no log, so its data
// file is complete on its own.
package boltstore

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/dsd-project/dsd/engine/storage"
)

// FileName is the data file's name inside the data directory.
const FileName = "dsd.db"

// ErrLocked is returned by Open when another process holds the data file.
var ErrLocked = errors.New("engine: the data directory is in use by another process")

// Options configure Open.
type Options struct {
	// Timeout bounds the wait for the data file's lock (0: wait forever).
	Timeout time.Duration
	// NoSync skips fsync. UNSAFE: acknowledged data can be lost on a crash. Tests only.
	NoSync bool
	// CheckpointInterval is how often the checkpointer applies the logged groups to the
	// data file (0: DefaultCheckpointInterval; negative: never by time).
	CheckpointInterval time.Duration
	// CheckpointBytes of logged groups start a checkpoint early (0:
	// DefaultCheckpointBytes; negative: never by size). With CheckpointBytes 1 and
	// CheckpointInline every group is checkpointed as it commits.
	CheckpointBytes int64
	// CheckpointInline runs the size-triggered checkpoint inside Commit instead of in
	// the background (tests).
	CheckpointInline bool
	// SegmentBytes is the size past which the log starts a new segment (0:
	// DefaultSegmentBytes).
	SegmentBytes int64
	// ZeroAhead is how many bytes of zeros the log keeps written and synced past its last
	// record, in the background, so that a group's fdatasync flushes data only (0:
	// DefaultZeroAhead, none with NoSync; negative: none).
	ZeroAhead int64
	// Warn receives what recovery repaired (nil: slog.Warn).
	Warn func(msg string, args ...any)
}

// The checkpointer's defaults: a checkpoint every 200 ms or 8 MiB of log, segments of
// 64 MiB.
const (
	DefaultCheckpointInterval       = 200 * time.Millisecond
	DefaultCheckpointBytes    int64 = 8 << 20
	DefaultSegmentBytes       int64 = 64 << 20
)

// Store is a storage.Backend on one bbolt file and its group log.
type Store struct {
	db    *bolt.DB
	opts  Options
	fault atomic.Pointer[func() error]
	log   wal // the committer's

	mu     sync.RWMutex // guards active and frozen
	active *layer       // groups logged since the last cut
	frozen []*layer     // cut, not yet in the data file, oldest first

	ckMu    sync.Mutex // one checkpoint at a time
	ckErr   atomic.Pointer[error]
	kick    chan struct{}
	stop    chan struct{}
	stopped chan struct{}
}

var _ storage.Backend = (*Store)(nil)

// Open opens (creating if needed) the data file FileName under dir. Errors: ErrLocked,
// a data file of another format, IO errors.
func Open(dir string, opts Options) (*Store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, FileName)
	db, err := bolt.Open(path, 0o600, &bolt.Options{
		Timeout:         opts.Timeout,
		NoSync:          opts.NoSync,
		InitialMmapSize: 1 << 30,
		FreelistType:    bolt.FreelistMapType,
	})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("%w (%s)", ErrLocked, path)
	}
	if err != nil {
		return nil, fmt.Errorf("engine: open %s: %w", path, err)
	}
	s := &Store{db: db, opts: withDefaults(opts)}
	if err := s.initSchema(); err != nil {
		db.Close()
		return nil, err
	}
	if err := s.recover(dir); err != nil {
		db.Close()
		return nil, err
	}
	s.startCheckpointer()
	s.log.zero.start()
	return s, nil
}

func withDefaults(o Options) Options {
	if o.CheckpointInterval == 0 {
		o.CheckpointInterval = DefaultCheckpointInterval
	}
	if o.CheckpointBytes == 0 {
		o.CheckpointBytes = DefaultCheckpointBytes
	}
	if o.SegmentBytes <= 0 {
		o.SegmentBytes = DefaultSegmentBytes
	}
	if o.ZeroAhead == 0 && !o.NoSync {
		o.ZeroAhead = DefaultZeroAhead
	}
	if o.Warn == nil {
		o.Warn = slog.Warn
	}
	return o
}

func (s *Store) initSchema() error {
	return s.db.Update(func(tx *bolt.Tx) error {
		for _, name := range allBuckets {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		sys := tx.Bucket(bktSystem)
		switch v := sys.Get(keyFormat); {
		case v == nil:
			return sys.Put(keyFormat, []byte(formatVersion))
		case string(v) != formatVersion:
			return fmt.Errorf("engine: data file format %q, this build reads %q", v, formatVersion)
		}
		return nil
	})
}

// Path returns the data file's path.
func (s *Store) Path() string { return s.db.Path() }

// Close checkpoints every logged group, removes the log and closes the data file.
// Errors: the checkpoint's (the log is then kept and replayed at the next Open).
func (s *Store) Close() error {
	s.stopCheckpointer()
	err := s.checkpoint(nil)
	if cerr := s.log.close(); err == nil {
		err = cerr
	}
	if err == nil {
		if rerr := os.RemoveAll(s.log.dir); rerr != nil {
			err = rerr
		}
	}
	if cerr := s.db.Close(); err == nil {
		err = cerr
	}
	return err
}

// LastSID returns the last stream id handed out.
func (s *Store) LastSID() (uint64, error) {
	var sid uint64
	err := s.db.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket(bktSystem).Get(keyNextSID); v != nil {
			sid = getU64(v)
		}
		return nil
	})
	return sid, err
}

// Probe repairs the log after a failed append, retries a failed checkpoint, and writes
// the time of the probe into the system bucket, in a transaction of its own.
func (s *Store) Probe() error {
	if err := s.log.repair(); err != nil {
		return err
	}
	if err := s.checkpoint(nil); err != nil {
		return err
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bktSystem).Put(keyProbe, u64(uint64(time.Now().UnixMilli()))); err != nil {
			return err
		}
		if f := s.fault.Load(); f != nil {
			return (*f)()
		}
		return nil
	})
}

// Check runs bbolt's consistency check over the file (tests).
func (s *Store) Check() error {
	return s.db.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			return err
		}
		return nil
	})
}

// SetFault installs a test hook that runs inside every commit (and probe) transaction
// after its writes: an error rolls the whole group back and fails it (nil removes it).
func (s *Store) SetFault(f func() error) {
	if f == nil {
		s.fault.Store(nil)
		return
	}
	s.fault.Store(&f)
}
