package model

import (
	"maps"
	"slices"
	"time"
)

// stream is one incarnation of a stream in the reference state. Values are immutable
// once they are in a State: every change copies the struct (and any slice or map it
// changes) first, so earlier States stay valid.
type stream struct {
	incarnation uint64 // new on every (re)creation
	contentType string // as given at creation, echoed unchanged
	mediaType   string // normalized
	ttl         *uint64
	expiresAtMs *int64 // absolute expiry, Unix ms
	accessMs    int64  // last GET or POST (sliding TTL, A-14), Unix ms

	data    []byte   // canonical bytes (D3): every message ever appended, in order
	msgEnds []uint64 // end offset of every message: the read boundaries

	closed    bool
	closer    *Producer // the producer tuple that closed the stream (B-5.2.1-09, A-09)
	streamSeq *string   // last Stream-Seq recorded
	producers map[string]ProducerState
	receipts  map[string]recordRange // record ranges of accepted producer requests (JSON streams)

	attrs []byte // normalized attribute object; nil: none (extension §5)

	retained Offset    // retention boundary: offsets below answer 410 (extension §2.2)
	snapshot *snapshot // the visible snapshot (extension §2)

	unitEnds    []uint64 // end offset of every append unit: sub-offset limits
	fork        *forkOf  // what this stream was forked from; nil: not a fork (B-4.2)
	softDeleted bool     // deleted while forks reference it (B-4.2-10)
}

// clone returns a shallow copy to change. Slices are shared but are only ever extended
// through appendUnit, which never writes into a shared backing array; the producer map
// is copied by setProducer.
func (st *stream) clone() *stream {
	c := *st
	return &c
}

func (st *stream) isJSON() bool { return IsJSON(st.mediaType) }

func (st *stream) tail() Offset { return Offset(len(st.data)) }

// appendUnit appends one append unit: the canonical bytes of its messages (for a
// non-JSON stream, the body is one message; D3, B-9.1-01).
func (st *stream) appendUnit(msgs [][]byte) {
	if len(msgs) == 0 {
		return
	}
	data := slices.Clip(st.data)
	ends := slices.Clip(st.msgEnds)
	for _, m := range msgs {
		data = append(data, m...)
		ends = append(ends, uint64(len(data)))
	}
	st.data, st.msgEnds = data, ends
	st.unitEnds = append(slices.Clip(st.unitEnds), uint64(len(data)))
}

// setProducer records a producer's state, copying the table first.
func (st *stream) setProducer(id string, ps ProducerState) {
	m := maps.Clone(st.producers)
	if m == nil {
		m = map[string]ProducerState{}
	}
	m[id] = ps
	st.producers = m
}

// producer returns the state of producer id, nil when the stream has none.
func (st *stream) producer(id string) *ProducerState {
	ps, ok := st.producers[id]
	if !ok {
		return nil
	}
	return &ps
}

// isBoundary reports whether o is a message boundary: the start, or the end of a
// message.
func (st *stream) isBoundary(o Offset) bool {
	if o == 0 {
		return true
	}
	_, found := slices.BinarySearch(st.msgEnds, uint64(o))
	return found
}

// isReadPosition reports whether a read may start at o (tail > o >= retained): a message
// boundary, or on a text stream the held position inside a message (D9, HeldPosition).
func (st *stream) isReadPosition(o Offset) bool {
	if st.isBoundary(o) {
		return true
	}
	if !textHolds(st.mediaType) {
		return false
	}
	i, _ := slices.BinarySearch(st.msgEnds, uint64(o))
	var b uint64
	if i > 0 {
		b = st.msgEnds[i-1]
	}
	return i < len(st.msgEnds) && HeldPosition(st.data[b:st.msgEnds[i]], int(uint64(o)-b))
}

// expired reports whether the stream's lifetime has ended at now: an absolute
// expiry is reached (B-5.1-06: never extended), or more than the TTL has passed since
// the last GET or POST (B-5.1-04, B-5.1-08; with TTL 0 the stream expires as soon as
// the clock moves past its last access, A-13). Times compare at millisecond precision.
func (st *stream) expired(now time.Time) bool {
	ms := now.UnixMilli()
	if st.expiresAtMs != nil && ms >= *st.expiresAtMs {
		return true
	}
	return st.ttl != nil && ms > st.accessMs+int64(*st.ttl)*1000
}

// StreamView is a read-only summary of a stream in a State, for tests and for the
// script generators that pick offsets to read.
type StreamView struct {
	Incarnation uint64
	ContentType string
	MediaType   string
	Tail        Offset
	Closed      bool
	Boundaries  []Offset // every readable offset: 0 and each message end
	Data        []byte   // canonical bytes
	TTL         *uint64
	ExpiresAt   *time.Time
	Attrs       []byte // normalized attribute object; nil: none
	Retained    Offset // retention boundary (extension §2.2)
	// The visible snapshot (extension §2): its offset (nil: none), Content-Type as
	// stored, digest and body.
	SnapshotOffset      *Offset
	SnapshotContentType string
	SnapshotDigest      string
	SnapshotBody        []byte
	RecordFirst         uint64 // F, N: record coordinates of a JSON stream (extension §6.1)
	RecordNext          uint64
}

func (st *stream) view() StreamView {
	b := make([]Offset, 0, len(st.msgEnds)+1)
	b = append(b, 0)
	for _, e := range st.msgEnds {
		b = append(b, Offset(e))
	}
	v := StreamView{Incarnation: st.incarnation, ContentType: st.contentType,
		MediaType: st.mediaType, Tail: st.tail(), Closed: st.closed, Boundaries: b,
		Data: slices.Clone(st.data), TTL: st.ttl, Attrs: slices.Clone(st.attrs), Retained: st.retained,
		RecordFirst: st.recordFirst(), RecordNext: st.recordNext()}
	if sn := st.snapshot; sn != nil {
		v.SnapshotOffset, v.SnapshotContentType = offsetPtr(sn.offset), sn.contentType
		v.SnapshotDigest, v.SnapshotBody = sn.digest, slices.Clone(sn.body)
	}
	if st.expiresAtMs != nil {
		t := time.UnixMilli(*st.expiresAtMs).UTC()
		v.ExpiresAt = &t
	}
	return v
}
