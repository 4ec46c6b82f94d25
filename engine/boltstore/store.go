// Package boltstore is dsd's default storage backend (storage.Backend): every stream in
// one bbolt file, each commit group one transaction and one fsync (D4). schema.go is the
// on-disk layout (format dsd-2).
package boltstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
}

// Store is a storage.Backend on one bbolt file.
type Store struct {
	db    *bolt.DB
	fault atomic.Pointer[func() error]
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
	s := &Store{db: db}
	if err := s.initSchema(); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
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

// Close closes the data file.
func (s *Store) Close() error { return s.db.Close() }

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

// Probe writes the time of the probe into the system bucket, in a transaction of its own.
func (s *Store) Probe() error {
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
