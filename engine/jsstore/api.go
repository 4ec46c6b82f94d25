package jsstore

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/dsd-project/dsd/engine/storage"
)

// Options configure a Store. Partitions and Replicas are fixed when the partitions'
// JetStream streams are first created; Open checks them against existing streams.
type Options struct {
	// Partitions is P, the number of partition streams (default 8).
	Partitions int
	// Replicas per partition stream (default 3; 1 only for single-server tests).
	Replicas int
	// Prefix names the partition streams "<Prefix>P<k>"; its lower case is the root of
	// their subjects (default "DS"). Several stores may share one JetStream with
	// different prefixes.
	Prefix string
	// Own lists the partitions Open loads; nil means all of them, an empty non-nil slice
	// none (the cluster layer then calls OpenPartition for each partition it owns).
	Own []int
	// NodeID starts every Nats-Msg-Id this store sends (default: random). Each Open adds
	// a random nonce, so ids never repeat across restarts.
	NodeID string
	// SIDFloor is the least value LastSID reports. The engine hands out ids from
	// LastSID+1.
	SIDFloor uint64
	// RandomSIDs makes LastSID report at least a random base in [2^40, 2^62) drawn at
	// Open, so that engines on several nodes hand out ids that stay unique when
	// partitions move (a cluster sets it; design §4.2 "random 64-bit id"). A collision
	// with an id of an open partition fails the create with storage.ErrConflict.
	RandomSIDs bool

	// Servers are the embedded servers whose sync setting Open checks; SysConn a
	// connection in the system account, used to ask every server of an external
	// cluster for its varz. One of them is required unless UnsafeSkipSyncCheck.
	Servers []*server.Server
	SysConn *nats.Conn
	// UnsafeSkipSyncCheck opens without checking sync_interval: always. UNSAFE: an
	// acknowledged commit may be lost on power failure. Tests of other things only.
	UnsafeSkipSyncCheck bool

	// PublishTimeout bounds one publish attempt (default 2s); ResolveTimeout bounds the
	// resolution of an in-doubt publish (default 15s, above JetStream's 4-9 s election).
	PublishTimeout time.Duration
	ResolveTimeout time.Duration
	// CheckpointFrames is the number of frames after which an incarnation's checkpoint
	// is rewritten (default 64); CheckpointBytes the log bytes (default 4 MiB).
	CheckpointFrames int
	CheckpointBytes  int
	// ChunkBytes is the largest message jsstore publishes (default 1 MiB - 8 KiB); frame
	// data above it is staged in chunks.
	ChunkBytes int
	// IndexBytes is the spacing of the offset index (default 1 MiB): a read starts at
	// most this many bytes of frames before its offset.
	IndexBytes uint64
	// OrphanAge is how old an unbound incarnation (a create whose name binding never
	// committed) must be before OpenPartition deletes it (default 2 min: older than any
	// create another owner may still be resolving).
	OrphanAge time.Duration
	// FrameCacheBytes bounds the decoded frames a store keeps for reads (default 16 MiB;
	// a cluster opening one store per partition multiplies it).
	FrameCacheBytes int
	// OnConflict, when set, is called (outside every lock) with the partition of each
	// commit that lost its compare-and-set: another writer owns the partition.
	OnConflict func(partition int)
}

func (o *Options) defaults() {
	if o.Partitions <= 0 {
		o.Partitions = 8
	}
	if o.Replicas <= 0 {
		o.Replicas = 3
	}
	if o.Prefix == "" {
		o.Prefix = "DS"
	}
	if o.RandomSIDs {
		var b [8]byte
		_, _ = rand.Read(b[:])
		o.SIDFloor = max(o.SIDFloor, 1<<40+binary.BigEndian.Uint64(b[:])%(1<<62-1<<40))
	}
	if o.NodeID == "" {
		o.NodeID = randomHex(4)
	}
	if o.PublishTimeout <= 0 {
		o.PublishTimeout = 2 * time.Second
	}
	if o.ResolveTimeout <= 0 {
		o.ResolveTimeout = 15 * time.Second
	}
	if o.CheckpointFrames <= 0 {
		o.CheckpointFrames = 64
	}
	if o.CheckpointBytes <= 0 {
		o.CheckpointBytes = 4 << 20
	}
	if o.ChunkBytes <= 0 {
		o.ChunkBytes = 1<<20 - 8<<10
	}
	if o.OrphanAge == 0 {
		o.OrphanAge = 2 * time.Minute
	}
	if o.FrameCacheBytes <= 0 {
		o.FrameCacheBytes = 16 << 20
	}
	if o.IndexBytes == 0 {
		o.IndexBytes = 1 << 20
	}
}

// Errors of a Store besides JetStream's own.
var (
	// ErrNotOwned: the call concerns a partition this store has not opened. A commit's
	// ErrNotOwned also wraps storage.ErrConflict (another node owns the stream).
	ErrNotOwned = errors.New("jsstore: partition not open on this node")
	// ErrClosed: the store is closed.
	ErrClosed = errors.New("jsstore: closed")
	// ErrSyncNotAlways: a JetStream server does not fsync before it acknowledges.
	ErrSyncNotAlways = errors.New("jsstore: JetStream must run with sync_interval: always")
)

// Store is a storage.Backend on JetStream. It is the only writer of the partitions it
// has open (the cluster layer's lease guarantees it; a compare-and-set catches a
// violation). Safe for concurrent use as storage.Backend allows.
type Store struct {
	nc    *nats.Conn
	js    jetstream.JetStream
	opts  Options
	root  string
	nonce string

	commitMu sync.Mutex // one writer: Commit, Collect, Trim, Probe, OpenPartition
	mu       sync.RWMutex
	parts    map[int]*partition
	sidPart  map[uint64]int
	closed   bool
	counter  atomic.Uint64 // Msg-Id counter
	resends  atomic.Uint64
	inFlight atomic.Uint64
	conflict atomic.Uint64
	fault    func() error
	dropAck  func(subject string, attempt int) bool // tests: lose the reply of an attempt
	noDirect bool                                   // tests: direct gets answer nothing
	noNames  bool                                   // tests: name bindings fail unpublished
	noSettle bool                                   // tests: subscription records are never materialized
	decoded  atomic.Uint64                          // frames decoded from JetStream (tests)
	frames   *frameCache
	streams  map[int]jetstream.Stream // partition streams' handles (set by Open)
}

var _ storage.Backend = (*Store)(nil)

// Open connects a store to JetStream over nc, creates the partition streams that do not
// exist yet, and loads the partitions of opts.Own. Errors: ErrSyncNotAlways (or an
// error saying why the setting could not be checked), a partition stream whose
// configuration differs, JetStream errors.
func Open(ctx context.Context, nc *nats.Conn, opts Options) (*Store, error) {
	opts.defaults()
	if err := checkSync(ctx, opts); err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	s := &Store{nc: nc, js: js, opts: opts, root: strings.ToLower(opts.Prefix), nonce: randomHex(4),
		parts: map[int]*partition{}, sidPart: map[uint64]int{}, frames: newFrameCache(opts.FrameCacheBytes),
		streams: map[int]jetstream.Stream{}}
	for k := 0; k < opts.Partitions; k++ {
		if err := s.ensureStream(ctx, k); err != nil {
			return nil, err
		}
	}
	own := opts.Own
	if own == nil {
		for k := 0; k < opts.Partitions; k++ {
			own = append(own, k)
		}
	}
	for _, k := range own {
		if err := s.OpenPartition(ctx, k); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// PartitionOf returns the partition of stream name "{bucket}/{stream}" among p: FNV-1a
// (64 bit) of the name, mod p. Stable across versions and nodes.
func PartitionOf(name string, p int) int {
	h := fnv.New64a()
	h.Write([]byte(name))
	return int(h.Sum64() % uint64(p))
}

// PartitionOfBucket returns the partition holding bucket id's record.
func PartitionOfBucket(id string, p int) int { return PartitionOf("\x00bucket/"+id, p) }

// Partitions returns P.
func (s *Store) Partitions() int { return s.opts.Partitions }

// StreamName returns the JetStream stream of partition k ("<Prefix>P<k>").
func (s *Store) StreamName(k int) string { return fmt.Sprintf("%sP%d", s.opts.Prefix, k) }

// OpenPartition takes partition k over: it loads the state of every incarnation, name
// and bucket record of k from JetStream (each incarnation from its checkpoint and the
// log after it), after which this store commits and reads k. Opening an open partition
// reloads it. Call it only while holding k's ownership.
func (s *Store) OpenPartition(ctx context.Context, k int) error {
	if k < 0 || k >= s.opts.Partitions {
		return fmt.Errorf("jsstore: partition %d out of range [0, %d)", k, s.opts.Partitions)
	}
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	p, err := s.loadPartition(ctx, k)
	if err != nil {
		return fmt.Errorf("jsstore: load partition %d: %w", k, err)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	s.dropLocked(k)
	s.parts[k] = p
	for sid := range p.incs {
		s.sidPart[sid] = k
	}
	orphans := p.orphans(time.Now().Add(-s.opts.OrphanAge).UnixMilli())
	s.mu.Unlock()
	s.commitLocked(orphans) // best effort: failures leave them for the next open
	return nil
}

// ClosePartition gives partition k up: its state is dropped and calls concerning it
// fail with ErrNotOwned until it is opened again. Commits already acknowledged stay.
func (s *Store) ClosePartition(k int) {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropLocked(k)
}

func (s *Store) dropLocked(k int) {
	if p := s.parts[k]; p != nil {
		for sid := range p.incs {
			if s.sidPart[sid] == k {
				delete(s.sidPart, sid)
			}
		}
		delete(s.parts, k)
	}
}

// Owned returns the open partitions, ascending.
func (s *Store) Owned() []int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]int, 0, len(s.parts))
	for k := range s.parts {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

// Fence is the store's view of one open partition: what it fences its commits with.
type Fence struct {
	Partition int
	// Streams is the number of incarnations whose last log sequence the store holds
	// (each commit's compare-and-set expects it); LastSeq the highest of them.
	Streams int
	LastSeq uint64
	// LoadedAt is when the partition was opened; Conflicts counts commits since that
	// lost their compare-and-set (another writer: ownership is in question).
	LoadedAt  time.Time
	Conflicts uint64
}

// Fences returns the view of every open partition, by partition.
func (s *Store) Fences() []Fence {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]Fence, 0, len(s.parts))
	for _, p := range s.parts {
		f := Fence{Partition: p.k, Streams: len(p.incs), LoadedAt: p.loadedAt, Conflicts: p.conflicts}
		for _, in := range p.incs {
			f.LastSeq = max(f.LastSeq, in.Seq)
		}
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Partition < out[j].Partition })
	return out
}

// Stats counts publish outcomes since Open.
type Stats struct {
	// Resends of an in-doubt publish (timeout, lost connection, no leader).
	Resends uint64
	// InFlight rejections (10164) resent at once.
	InFlight uint64
	// Conflicts: publishes that lost their compare-and-set to another writer.
	Conflicts uint64
}

// Stats returns the publish counters.
func (s *Store) Stats() Stats {
	return Stats{Resends: s.resends.Load(), InFlight: s.inFlight.Load(), Conflicts: s.conflict.Load()}
}

// Leader returns the name of the server leading partition k's stream ("" if none).
func (s *Store) Leader(ctx context.Context, k int) (string, error) {
	st, err := s.js.Stream(ctx, s.StreamName(k))
	if err != nil {
		return "", err
	}
	info, err := st.Info(ctx)
	if err != nil {
		return "", err
	}
	if info.Cluster == nil {
		return "", nil
	}
	return info.Cluster.Leader, nil
}

// Path names the store: the partition streams' prefix on the connected server.
func (s *Store) Path() string {
	return fmt.Sprintf("jetstream:%s%s", s.nc.ConnectedUrlRedacted(), "/"+s.opts.Prefix)
}

// Close releases the store; the connection stays the caller's.
func (s *Store) Close() error {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.parts = map[int]*partition{}
	s.sidPart = map[uint64]int{}
	return nil
}

// SetFault makes every following Commit and Probe fail with f's error before anything
// is published (tests; nil removes it).
func (s *Store) SetFault(f func() error) {
	s.mu.Lock()
	s.fault = f
	s.mu.Unlock()
}
