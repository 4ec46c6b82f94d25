package engine

import (
	"sync/atomic"

	"github.com/dsd-project/dsd/model"
)

// Bootstrap is an open /bootstrap read (extension §3): the visible snapshot, then every
// retained message after it up to the tail at open time, read in chunks. While it is
// open the stream's retained data is not trimmed. Close it when done.
type Bootstrap struct {
	Info     StreamInfo    // the stream at open time: Tail is Stream-Next-Offset
	Snapshot *SnapshotInfo // nil: no snapshot (Stream-Snapshot-Offset: -1)
	Body     []byte        // the snapshot blob
	From     model.Offset  // first update: the snapshot's offset, else the retained start
	FromRec  uint64        // its record ordinal (JSON streams)

	e    *Engine
	s    *stream
	v    *streamMeta
	next uint64
	rec  uint64
}

// OpenBootstrap opens a bootstrap read of the stream at key. It restarts the sliding TTL.
// Errors: model.ErrStreamNotFound, model.ErrStreamGone.
func (e *Engine) OpenBootstrap(key model.StreamKey) (*Bootstrap, error) {
	s, _, err := e.holdReadable(key, true, func(s *stream) *atomic.Int32 { return &s.pins })
	if err != nil {
		return nil, err
	}
	b := &Bootstrap{e: e, s: s}
	err = e.withPublished(s, func(m *streamMeta, snap []byte) error {
		b.v, b.next, b.rec = m, m.RetainedFrom, m.RecordFirst
		if m.Snapshot != nil {
			b.next, b.rec = m.Snapshot.Offset, m.Snapshot.RecordAt
			b.Body = snap
		}
		return nil
	})
	if err != nil {
		s.pins.Add(-1)
		return nil, err
	}
	b.Info = b.v.info()
	b.Snapshot = b.Info.Snapshot
	b.From, b.FromRec = model.Offset(b.next), b.rec
	return b, nil
}

// Next returns the next messages (about maxBytes, whole messages, with Ends), or an empty
// result once every update up to Info.Tail has been returned.
func (b *Bootstrap) Next(maxBytes int) (ReadResult, error) {
	res := ReadResult{Info: b.Info, Start: model.Offset(b.next), Next: model.Offset(b.next), RecordStart: b.rec, RecordNext: b.rec}
	if b.next >= b.v.Tail {
		return res, nil
	}
	sp, err := b.e.messages(b.s, b.v, b.next, limits{Bytes: maxBytes})
	if err != nil {
		return ReadResult{}, err
	}
	res.Data, res.Ends = sp.data, sp.ends
	b.next += uint64(len(res.Data))
	b.rec += uint64(len(sp.ends))
	res.Next, res.RecordNext = model.Offset(b.next), b.rec
	return res, nil
}

// Close releases the bootstrap.
func (b *Bootstrap) Close() { b.s.pins.Add(-1) }
