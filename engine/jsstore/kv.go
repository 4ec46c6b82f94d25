package jsstore

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"github.com/dsd-project/dsd/engine/storage"
)

// The subscription key spaces (storage.Change.Subs, base protocol §6-§7, D10). A key of
// spaces subs and links lives in its bucket's partition (PartitionOfBucket of the key up
// to its first NUL), the keys space in partition 0. A partition holds, per key, the
// subject r.<k>.s.<hex sha256(space NUL key)[:16]> (rolled up, compare-and-set: the key's
// materialized value or tombstone), and the journal r.<k>.j (rolled up, compare-and-set).
//
// A change's puts (prefix deletes expanded against the state the group leaves) commit in
// one message: in the frame of the change's own incarnation when it has one in the same
// partition and no earlier change of the group touched the same keys, else in the
// partition's journal message of the group (published after the frames). Once
// acknowledged, every touched key is materialized on its subject. A key's value is the
// put with the highest stream sequence among its subject, the journal and the frames
// after the checkpoints (opening a partition folds them in that way), so a crash between
// the commit and the materialization loses nothing. While a put is not materialized
// (pending) no journal is rolled up over it, no checkpoint hides its frame and neither
// Trim nor Collect runs.

// kvPut is one single-key put on the wire (a frame part's "kv", a journal entry, a key
// subject's payload).
type kvPut struct {
	Space string `json:"s"`
	Key   []byte `json:"k"`
	Val   []byte `json:"v,omitempty"`
	Del   bool   `json:"d,omitempty"`
}

// journalMsg is the payload of a partition's journal message.
type journalMsg struct {
	Puts []kvPut `json:"puts"`
}

// kvEntry is one key's value (nil: deleted) with the sequence it was written at (valSeq)
// and the sequence of its subject's last message (subj: the CAS base; 0 when none).
type kvEntry struct {
	val    []byte
	valSeq uint64
	subj   uint64
}

// kvSpace is one space of a partition, with its keys in byte order (rebuilt when dirty).
type kvSpace struct {
	m      map[string]*kvEntry
	sorted []string
	dirty  bool
}

// kvRef names a key of a partition.
type kvRef struct{ space, key string }

// kvState is a partition's subscription state.
type kvState struct {
	spaces     map[string]*kvSpace
	pending    map[kvRef]bool // written but not materialized on the key's subject
	journalSeq uint64         // last message of the journal (CAS base)
}

func newKVState() kvState {
	return kvState{spaces: map[string]*kvSpace{}, pending: map[kvRef]bool{}}
}

func (st *kvState) entry(space, key string, create bool) *kvEntry {
	sp := st.spaces[space]
	if sp == nil {
		if !create {
			return nil
		}
		sp = &kvSpace{m: map[string]*kvEntry{}}
		st.spaces[space] = sp
	}
	e := sp.m[key]
	if e == nil && create {
		e = &kvEntry{}
		sp.m[key] = e
		sp.dirty = true
	}
	return e
}

// apply folds put p, written at seq, in when it is newer than what the key holds.
func (st *kvState) apply(p kvPut, seq uint64) {
	e := st.entry(p.Space, string(p.Key), true)
	if seq < e.valSeq {
		return
	}
	e.val, e.valSeq = p.Val, seq
	if p.Del {
		e.val = nil
	} else if e.val == nil {
		e.val = []byte{}
	}
	if e.valSeq > e.subj {
		st.pending[kvRef{p.Space, string(p.Key)}] = true
	}
}

// keys returns space's keys starting with prefix that hold a value, in byte order.
func (st *kvState) keys(space, prefix string) []string {
	sp := st.spaces[space]
	if sp == nil {
		return nil
	}
	if sp.dirty {
		sp.sorted = sp.sorted[:0]
		for k := range sp.m {
			sp.sorted = append(sp.sorted, k)
		}
		sort.Strings(sp.sorted)
		sp.dirty = false
	}
	var out []string
	for i := sort.SearchStrings(sp.sorted, prefix); i < len(sp.sorted) && strings.HasPrefix(sp.sorted[i], prefix); i++ {
		if sp.m[sp.sorted[i]].val != nil {
			out = append(out, sp.sorted[i])
		}
	}
	return out
}

// kvPartition returns the partition of a key of space.
func (s *Store) kvPartition(space string, key []byte) int {
	if space == storage.SpaceKeys {
		return 0
	}
	bucket, _, _ := bytes.Cut(key, []byte{0})
	return PartitionOfBucket(string(bucket), s.opts.Partitions)
}

func (s *Store) kvSubj(k int, space, key string) string {
	h := sha256.Sum256([]byte(space + "\x00" + key))
	return fmt.Sprintf("%s.%d.s.%s", s.root, k, hex.EncodeToString(h[:16]))
}

func (s *Store) journalSubj(k int) string { return fmt.Sprintf("%s.%d.j", s.root, k) }

// KV returns the value at key in a subscription space, nil when absent. Errors:
// ErrNotOwned when the key's partition is not open here.
func (s *Store) KV(space string, key []byte) ([]byte, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	p := s.parts[s.kvPartition(space, key)]
	if p == nil {
		return nil, ErrNotOwned
	}
	e := p.kv.entry(space, string(key), false)
	if e == nil || e.val == nil {
		return nil, nil
	}
	return bytes.Clone(e.val), nil
}

// KVScan visits the keys of a space starting with prefix in the open partitions, in
// byte order, until visit returns false. The values are copies taken before the first
// visit.
func (s *Store) KVScan(space string, prefix []byte, visit func(key, value []byte) bool) error {
	type kv struct {
		k string
		v []byte
	}
	var all []kv
	s.mu.Lock() // keys() may rebuild a sorted index
	for _, p := range s.parts {
		if p == nil {
			continue
		}
		for _, k := range p.kv.keys(space, string(prefix)) {
			all = append(all, kv{k, bytes.Clone(p.kv.spaces[space].m[k].val)})
		}
	}
	s.mu.Unlock()
	if s.opts.Partitions > 1 {
		sort.Slice(all, func(i, j int) bool { return all[i].k < all[j].k })
	}
	for _, e := range all {
		if !visit([]byte(e.k), e.v) {
			return nil
		}
	}
	return nil
}
