package jsstore

import (
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/dsd-project/dsd/engine/storage"
)

// partition is the folded state of one open partition.
type partition struct {
	k         int
	incs      map[uint64]*inc
	names     map[string]binding     // by name
	buckets   map[string]bucketEntry // records of buckets that live here
	lastSID   uint64
	hwm       uint64 // the high-water mark of collected ids (subject r.<k>.h)
	loadedAt  time.Time
	conflicts uint64
	kv        kvState // subscription records of the buckets that live here (kv.go)
}

// binding is the last message on a name's subject: the sid it binds (0: unbound).
type binding struct {
	SID uint64 `json:"sid"`
	Seq uint64 `json:"-"`
}

type bucketEntry struct {
	Rec *storage.BucketRecord
	Seq uint64
}

// inc is the fold of one incarnation's log (also its checkpoint's encoding).
type inc struct {
	SID     uint64        `json:"sid"`
	Seq     uint64        `json:"seq"` // last frame: the CAS base of the next commit
	Meta    *storage.Meta `json:"meta,omitempty"`
	Deleted bool          `json:"del,omitempty"`
	Name    string        `json:"name,omitempty"` // the name its meta names

	Tail    uint64                            `json:"tail"`
	RecNext uint64                            `json:"rn"`
	Prods   map[string]*storage.ProducerState `json:"prods,omitempty"` // receipts: Receipt scans the log
	Snaps   map[uint64]bodyRef                `json:"snaps,omitempty"`
	Index   []indexEntry                      `json:"index,omitempty"`

	Retained bool   `json:"retained,omitempty"`
	TrimOff  uint64 `json:"trimoff,omitempty"` // messages below are freed
	TrimRec  uint64 `json:"trimrec,omitempty"` // records below are freed
	Stage    int    `json:"stage,omitempty"`   // collection progress of a deleted incarnation

	kvSeen      []kvAt // loading: the subscription records of the frames folded
	sinceFrames int    // frames and bytes since the last checkpoint
	sinceBytes  int
}

// bodyRef locates a snapshot body: the frame holding it and its place in the data.
type bodyRef struct {
	Seq uint64 `json:"seq"`
	At  int    `json:"at"`
	Len int    `json:"n"`
}

// indexEntry says that the frame at Seq starts with the message at Off (and, on JSON
// streams, record Rec): the offset index, one entry per IndexBytes of data.
type indexEntry struct {
	Off  uint64 `json:"o"`
	Seq  uint64 `json:"s"`
	Rec  uint64 `json:"r,omitempty"`
	Recs bool   `json:"rs,omitempty"`
}

func newInc(sid uint64) *inc {
	return &inc{SID: sid, Prods: map[string]*storage.ProducerState{}, Snaps: map[uint64]bodyRef{}}
}

func newPartition(k int) *partition {
	return &partition{k: k, incs: map[uint64]*inc{}, names: map[string]binding{},
		buckets: map[string]bucketEntry{}, loadedAt: time.Now(), kv: newKVState()}
}

// apply folds frame f (committed at f.seq) into in. step is the offset index spacing.
func (in *inc) apply(f *frame, step uint64) {
	for i := range f.head.Parts {
		in.applyPart(&f.head.Parts[i], f, step)
	}
	in.Seq = f.seq
	in.sinceFrames++
	in.sinceBytes += len(f.data)
}

func (in *inc) applyPart(p *part, f *frame, step uint64) {
	if p.Snap != nil {
		in.Snaps[p.Snap.Off] = bodyRef{Seq: f.seq, At: p.At, Len: p.Snap.Len}
	}
	if p.Drop != nil {
		delete(in.Snaps, *p.Drop)
	}
	if n := len(p.Msgs); n > 0 {
		first := p.Msgs[0].Off
		if l := len(in.Index); l == 0 || first >= in.Index[l-1].Off+step {
			in.Index = append(in.Index, indexEntry{Off: first, Seq: f.seq, Rec: p.Rec0, Recs: p.Records})
		}
		last := p.Msgs[n-1]
		in.Tail = max(in.Tail, last.Off+uint64(last.Len-1))
		if p.Records {
			in.RecNext = max(in.RecNext, p.Rec0+uint64(n))
		}
	}
	if pr := p.Producer; pr != nil {
		in.Prods[pr.ID] = pr.State
	}
	if p.Retained {
		in.Retained = true
	}
	if p.Meta != nil && !in.Deleted {
		in.Meta, in.Name = p.Meta, p.Meta.Key()
	}
	if p.Delete {
		in.Deleted, in.Meta = true, nil
	}
}

// meta returns a copy of the meta with its derived fields brought up to date, nil when
// deleted or never created.
func (in *inc) meta() *storage.Meta {
	if in == nil || in.Meta == nil {
		return nil
	}
	m := *in.Meta
	m.Tail = max(m.Tail, in.Tail)
	m.RecordNext = max(m.RecordNext, in.RecNext)
	return &m
}

// orphans returns the deletions of p's incarnations created before beforeMs whose name
// was never bound to them (their create's binding failed), except fork sources kept for
// their forks.
func (p *partition) orphans(beforeMs int64) []storage.Change {
	var out []storage.Change
	for sid, in := range p.incs {
		m := in.Meta
		if m == nil || m.SoftDeleted || m.Refs > 0 || m.CreatedMs >= beforeMs || p.names[in.Name].SID == sid {
			continue
		}
		out = append(out, storage.Change{SID: sid, Unbind: []storage.Binding{{Name: in.Name, Bucket: m.Bucket, SID: sid}}})
	}
	return out
}

// live reports whether name binding b points at a live incarnation of p.
func (p *partition) live(b binding) *inc {
	if b.SID == 0 {
		return nil
	}
	if in := p.incs[b.SID]; in != nil && in.Meta != nil {
		return in
	}
	return nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
