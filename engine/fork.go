package engine

import (
	"bytes"
	"fmt"
	"time"

	"github.com/dsd-project/dsd/engine/storage"

	"github.com/dsd-project/dsd/model"
)

// ForkRequest is the fork part of a PUT (B-4.2-01..03): the source's key and path as
// requested, the divergence offset (nil: the source's tail) and the sub-offset.
type ForkRequest struct {
	Source     model.StreamKey
	SourcePath string        // Stream-Forked-From as sent
	Offset     *model.Offset // Stream-Fork-Offset
	SubOffset  uint64        // Stream-Fork-Sub-Offset (0 = absent)
}

// sameForkConfig compares a fork create request with an existing stream (B-4.2-07,
// B-4.2-16, A-10): the request's own fork parameters, not inherited values.
func sameForkConfig(m *streamMeta, req *CreateRequest) bool {
	f, r := m.Fork, req.Fork
	if f == nil || r == nil || f.SourcePath != r.SourcePath || f.SubOffset != r.SubOffset {
		return false
	}
	if r.Offset != nil && uint64(*r.Offset) != f.Anchor {
		return false
	}
	if req.MediaType != "" && req.MediaType != m.MediaType {
		return false
	}
	if m.Closed != req.Closed || !bytes.Equal(m.Attrs, req.Attrs) {
		return false
	}
	return sameTTL(f.ReqTTL, req.TTL) && sameExpiry(f.ReqExpiresMs, req.ExpiresAt)
}

// createForkLocked decides a fork and queues it (B-4.2, A-22, A-23). e.mu is held.
func (e *Engine) createForkLocked(key model.StreamKey, b *bucketState, req *CreateRequest, now time.Time) (CreateResult, *op, error) {
	src, err := e.lookupLocked(req.Fork.Source.String())
	if err != nil {
		return CreateResult{}, nil, err
	}
	if src == nil {
		return CreateResult{}, nil, model.ErrForkSourceMiss
	}
	src.mu.Lock()
	defer src.mu.Unlock()
	sv, err := forkableView(src, now)
	if err != nil {
		return CreateResult{}, nil, err
	}
	if req.MediaType == "" {
		req.ContentType, req.MediaType = sv.ContentType, sv.MediaType
	} else if req.MediaType != sv.MediaType {
		return CreateResult{}, nil, model.ErrContentTypeMismatch
	}
	anchor := sv.Tail
	if req.Fork.Offset != nil {
		anchor = uint64(*req.Fork.Offset)
	}
	var inheritedRecs uint64
	var prefix []cachedMsg
	var snapBody []byte
	if err := e.checkForkAnchor(sv, anchor); err != nil {
		return CreateResult{}, nil, err
	}
	if snap := sv.Snapshot; snap != nil && snap.Offset <= anchor {
		if snapBody, err = e.st.SnapshotBody(sv.ID, snap.Offset); err != nil {
			return CreateResult{}, nil, err
		}
	} else if sv.RetainedFrom > 0 {
		return CreateResult{}, nil, fmt.Errorf("%w: no snapshot covers the retained start before the fork point", model.ErrOffsetGone)
	}
	if prefix, err = e.forkPrefix(sv, anchor, req.Fork.SubOffset); err != nil {
		return CreateResult{}, nil, err
	}
	if sv.isJSON() {
		if inheritedRecs, err = e.ordinalAt(sv, anchor); err != nil {
			return CreateResult{}, nil, err
		}
	}
	var bodyMsgs [][]byte
	if sv.isJSON() && len(req.Body) > 0 {
		if bodyMsgs, err = model.FlattenJSON(req.Body, true); err != nil {
			return CreateResult{}, nil, err
		}
	}
	m := e.forkMeta(key, req, sv, anchor, inheritedRecs, now)
	if snapBody != nil {
		c := *sv.Snapshot
		m.Snapshot = &c
	}
	entries := prefix
	if len(req.Body) > 0 && (!sv.isJSON() || len(bodyMsgs) > 0) {
		entries = append(entries, unitMessages(anchor+unitBytes(prefix), req.Body, bodyMsgs, sv.isJSON())...)
	}
	m.Tail = anchor + unitBytes(entries)
	if sv.isJSON() {
		m.RecordFirst = sv.RecordFirst
		m.RecordNext = inheritedRecs + uint64(len(entries))
	}
	nsrc := src.edit()
	nsrc.Refs++
	o, err := e.queueCreate(m, b, entries, snapBody, metaChange{s: src, after: nsrc})
	if err != nil {
		return CreateResult{}, nil, err
	}
	src.m = nsrc
	src.lastLSN = o.lsn
	return CreateResult{Created: true, Info: m.info(), RecordStart: inheritedRecs, RecordNext: m.RecordNext}, o, nil
}

// forkableView returns the committed view of a fork source. src.mu is held.
func forkableView(src *stream, now time.Time) (*streamMeta, error) {
	sv := src.vis
	switch {
	case src.broken.Load() != nil:
		return nil, model.ErrStorageFailed
	case src.deleted || src.visDeleted || sv == nil:
		return nil, model.ErrForkSourceMiss
	case sv.SoftDeleted || src.m.SoftDeleted:
		return nil, model.ErrForkSourceGone
	case src.live.Load() == 0 && sv.expired(now, src.access.Load()):
		if sv.Refs > 0 {
			return nil, model.ErrForkSourceGone // expiring makes it soft-deleted
		}
		return nil, model.ErrForkSourceMiss
	}
	return sv, nil
}

// forkMeta builds a fork's meta with the TTL inheritance of B-4.2-05. e.mu is held.
func (e *Engine) forkMeta(key model.StreamKey, req *CreateRequest, sv *streamMeta, anchor, recs uint64, now time.Time) *streamMeta {
	m := e.newMeta(key, req, now)
	f := &forkMeta{SourceID: sv.ID, SourcePath: req.Fork.SourcePath, Anchor: anchor,
		SubOffset: req.Fork.SubOffset, ReqTTL: req.TTL, ReqCT: req.ContentType,
		InheritedRecords: recs, Chain: sv.inheritedUpTo(anchor)}
	if req.ExpiresAt != nil {
		v := req.ExpiresAt.UnixMilli()
		f.ReqExpiresMs = &v
	}
	m.Fork = f
	if req.TTL == nil && req.ExpiresAt == nil {
		m.TTL, m.ExpiresMs = sv.TTL, sv.ExpiresMs
	}
	m.RetainedFrom = sv.RetainedFrom
	return m
}

// checkForkAnchor validates Stream-Fork-Offset against the source view (B-4.2-06, A-22).
func (e *Engine) checkForkAnchor(sv *streamMeta, anchor uint64) error {
	switch {
	case anchor > sv.Tail:
		return model.ErrOffsetBeyondTail
	case anchor < sv.RetainedFrom:
		return model.ErrOffsetGone
	case anchor == sv.Tail:
		return nil
	}
	return e.st.Messages(sv.segments(), anchor, sv.Tail, storage.One, nil)
}

// forkPrefix materializes the sub-offset prefix (B-4.2-14, A-22): the first n bytes (or,
// on JSON streams, n messages) of what remains of the append unit at anchor, as one unit
// at anchor. n beyond that remainder is ErrBadForkRequest.
func (e *Engine) forkPrefix(sv *streamMeta, anchor, n uint64) ([]cachedMsg, error) {
	if n == 0 {
		return nil, nil
	}
	if anchor >= sv.Tail {
		return nil, model.ErrBadForkRequest
	}
	unit, err := e.unitAt(sv, anchor)
	if err != nil {
		return nil, err
	}
	if !sv.isJSON() {
		if n > unit[0].Size() {
			return nil, model.ErrBadForkRequest
		}
		buf := append([]byte{storage.FlagUnitEnd}, unit[0].Data()[:n]...)
		return []cachedMsg{{Off: anchor, Val: buf}}, nil
	}
	if n > uint64(len(unit)) {
		return nil, model.ErrBadForkRequest
	}
	out := make([]cachedMsg, n)
	for i := range out {
		buf := bytes.Clone(unit[i].Val)
		buf[0] = 0
		if uint64(i) == n-1 {
			buf[0] = storage.FlagUnitEnd
		}
		out[i] = cachedMsg{Off: unit[i].Off, Val: buf}
	}
	return out, nil
}

// unitAt returns the messages from off to the end of the append unit holding off, as
// visible in sv (a unit inherited by a fork ends at the fork point).
func (e *Engine) unitAt(sv *streamMeta, off uint64) ([]cachedMsg, error) {
	var out []cachedMsg
	end := sv.Tail
	for _, sg := range sv.segments() {
		if off >= sg.From && off < sg.To {
			end = sg.To // a fork point ends a unit: units never span segments
		}
	}
	for off < end {
		var m cachedMsg
		err := e.st.Messages(sv.segments(), off, sv.Tail, storage.One, func(o uint64, val []byte) {
			m = cachedMsg{Off: o, Val: bytes.Clone(val)}
		})
		if err != nil {
			return nil, err
		}
		out = append(out, m)
		if m.Flags()&storage.FlagUnitEnd != 0 {
			break
		}
		off += m.Size()
	}
	return out, nil
}
