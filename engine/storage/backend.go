// Package storage is the seam below dsd's engine (DESIGN.md D11): the engine decides every
// change against its in-memory state and hands groups of decided changes to a Backend,
// which makes them durable in order and serves the committed-state reads the engine
// needs. Backends: engine/boltstore (one data file, the default) and engine/memstore (in
// memory, for fast tests); storagetest is the contract every backend passes.
//
// A backend decides nothing: each Change is already valid when it arrives. What a backend
// may report is whether the change is durable, was refused because another writer changed
// its stream (ErrConflict, a replicated backend's compare-and-set fence), or is in doubt
// (ErrUnknown); any other error is a failure of the store. A backend that fences each
// stream with a compare-and-set (design/distributed.md §4.4) keeps the stream's last
// version itself, keyed by Change.SID: the engine is the only writer of its streams and
// learns of another writer from ErrConflict.
package storage

import (
	"errors"

	"github.com/dsd-project/dsd/model"
)

var (
	// ErrConflict: the change was not applied because its stream changed under another
	// writer. The engine reloads the stream's committed state before deciding again.
	ErrConflict = errors.New("storage: the stream was changed by another writer")
	// ErrUnknown: the change may or may not be durable (unsettled at the deadline). The
	// engine treats the stream's decided state as lost and reloads it.
	ErrUnknown = errors.New("storage: the outcome of the commit is unknown")
)

// PerStream reports whether err concerns only the changes' stream (ErrConflict or
// ErrUnknown), not the whole store.
func PerStream(err error) bool {
	return errors.Is(err, ErrConflict) || errors.Is(err, ErrUnknown)
}

// Backend is a store of streams. Commit is called by one goroutine at a time (the
// engine's committer; not always the same goroutine), each call after the last returned;
// reads, Probe and the clean-up calls (Collect, Trim) may run
// concurrently with it and with each other. Reads see committed state only and return
// values the caller may keep and change. Read errors are storage failures; a missing item
// is not an error.
type Backend interface {
	// Commit makes group durable in order and returns one result per change: nil once
	// durable, ErrConflict, ErrUnknown, or a store failure. A backend whose group is one
	// transaction (boltstore) returns the same result for every change: all or nothing.
	Commit(group []Change) []error

	// LastSID is the highest stream id ever bound (ids are never reused).
	LastSID() (uint64, error)
	// Stream returns the meta of the incarnation bound to name ("{bucket}/{stream}"), nil
	// when none is. Every meta a read returns has its tail and record tail brought up to
	// date from the stored messages and records (a Change may leave Meta nil for those).
	Stream(name string) (*Meta, error)
	// Incarnation returns the meta of incarnation sid (nil when deleted) and whether its
	// name is still bound to it.
	Incarnation(sid uint64) (m *Meta, bound bool, err error)
	// SnapshotOf returns the meta of incarnation sid and the body of its visible snapshot,
	// read together (nil body without a snapshot; nil meta when deleted).
	SnapshotOf(sid uint64) (*Meta, []byte, error)
	// SnapshotBody returns the snapshot body stored for sid at off, nil when none (an
	// empty body is empty, not nil).
	SnapshotBody(sid, off uint64) ([]byte, error)
	// Messages visits the stored messages (flags byte, then bytes) in [start, tail) across
	// segs in offset order within lim. start must be the offset of a stored message in the
	// first segment that reaches past it, else model.ErrOffsetNotBoundary. val is valid
	// only during visit.
	Messages(segs []Segment, start, tail uint64, lim Limits, visit func(off uint64, val []byte)) error
	// MessageAt returns the stored message (flags byte, then bytes) of segs that holds
	// offset off, and its offset; model.ErrOffsetNotBoundary when none does. It serves
	// reads that start inside a message (a text stream's held position, D9).
	MessageAt(segs []Segment, off uint64) (start uint64, val []byte, err error)
	// RecordOffset returns the offset of record r of incarnation sid (extension §6.1).
	RecordOffset(sid, r uint64) (off uint64, ok bool, err error)
	// OrdinalAt returns the least record r in [lo, hi) of incarnation sid whose offset is
	// at least off, hi when none is (a binary search over the record index).
	OrdinalAt(sid, lo, hi, off uint64) (uint64, error)
	// Producer returns producer id's stored state on incarnation sid, nil when unknown.
	Producer(sid uint64, id string) (*ProducerState, error)
	// Receipt returns the stored acknowledgement of p's (epoch, seq) on sid (JSON streams).
	Receipt(sid uint64, p model.Producer) (Receipt, bool, error)
	// Names visits bound names starting with prefix, from seek (inclusive) in byte order,
	// with their incarnations' metas, until visit returns false.
	Names(prefix, seek string, visit func(name string, m *Meta) bool) error
	// Bucket returns a bucket's record, nil when it does not exist.
	Bucket(id string) (*BucketRecord, error)
	// KV returns the value at key in a subscription space (Space*), nil when absent.
	KV(space string, key []byte) ([]byte, error)
	// KVScan visits the keys of a subscription space starting with prefix, in byte order,
	// until visit returns false.
	KVScan(space string, prefix []byte, visit func(key, value []byte) bool) error
	// BucketIDs returns up to limit bucket ids strictly after after, in byte order (the
	// admin listener's bucket listing, D12).
	BucketIDs(after string, limit int) ([]string, error)

	// Trash returns up to limit deleted incarnations whose storage is still to free.
	Trash(limit int) ([]uint64, error)
	// Collect frees up to limit items of a deleted incarnation; finished reports that
	// nothing of it is left. It is background work: it commits on its own, never inside
	// a Commit group.
	Collect(sid uint64, limit int) (finished bool, err error)
	// Trims returns the incarnations marked for trimming below their retention boundary.
	Trims() ([]uint64, error)
	// Trim frees up to limit messages and records of sid below its stored retention
	// boundary (not while forks reference it); finished reports the mark is cleared.
	Trim(sid uint64, limit int) (finished bool, err error)

	// Probe commits a small write of its own: nil once the store takes writes again after
	// a failure (D4).
	Probe() error
	// Path names where the data lives (a file, a URL), for logs and diagnostics.
	Path() string
	// Close releases the store. Nothing is committed after it.
	Close() error
}

// Change is one decided change of at most one stream's incarnation SID (0: none), with
// the bookkeeping it implies elsewhere (bucket counts, fork reference counts). Its parts
// apply in the order of the fields below.
type Change struct {
	SID uint64
	// Bind creates the incarnation: its name is bound to SID (replacing a binding left by
	// a deleted incarnation), SID becomes the last id handed out, its bucket counts it.
	Bind *Binding
	// PutSnapshot stores a snapshot body of SID; DropSnapshot deletes the one at an offset.
	PutSnapshot  *SnapshotBody
	DropSnapshot *uint64
	// Messages are new messages of SID; with Records they are also the records
	// FirstRecord, FirstRecord+1, ... of the record index (JSON streams).
	Messages    []Message
	Records     bool
	FirstRecord uint64
	// Producer is a producer's new state; its Receipt, when set, is stored under
	// (ID, State.Epoch, Receipt.Seq) too (JSON streams, extension §6.3).
	Producer *ProducerPut
	// Retained marks SID for trimming below its retention boundary (Trims, Trim).
	Retained bool
	// Unbind deletes incarnations: each name is unbound when still bound to its SID (and
	// uncounted in its bucket), the meta is removed, the storage is handed to Trash.
	Unbind []Binding
	// Bucket creates or deletes a bucket record.
	Bucket *BucketPut
	// Subs writes subscription records, link records and the signing keys (base protocol
	// §6-§7, D10), in order, in the same transaction as the rest of the change.
	Subs []KVPut
	// Meta is SID's meta after the change; nil leaves the stored meta as it is (only
	// fields that loading derives changed: the tail and the record tail). Also are further
	// incarnations' metas after the change. A backend may write only the last meta of
	// each incarnation in a group; metas of unbound incarnations are not written.
	Meta *Meta
	Also []*Meta
}

// The key spaces of subscription state (KVPut.Space).
const (
	SpaceSubs  = "subs"  // "{bucket}\x00{id}" -> a subscription record
	SpaceLinks = "links" // "{bucket}\x00{id}\x00{path}" -> a link record
	SpaceKeys  = "keys"  // "sign_keys" -> the signing and token keys
)

// KVPut writes Value at Key in Space; a nil Value deletes Key; with Prefix it deletes every
// key of Space that starts with Key (Value ignored).
type KVPut struct {
	Space  string
	Key    []byte
	Value  []byte
	Prefix bool
}

// Binding names an incarnation: its name "{bucket}/{stream}", bucket and id.
type Binding struct {
	Name   string
	Bucket string
	SID    uint64
}

// SnapshotBody is a snapshot body at an offset.
type SnapshotBody struct {
	Offset uint64
	Body   []byte
}

// ProducerPut is a producer's state after an accepted append.
type ProducerPut struct {
	ID      string
	State   *ProducerState
	Receipt *Receipt
}

// BucketPut creates (Record set) or deletes (Record nil) bucket ID.
type BucketPut struct {
	ID     string
	Record *BucketRecord
}
