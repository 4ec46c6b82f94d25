package engine

import (
	"github.com/dsd-project/dsd/engine/storage"
	"github.com/dsd-project/dsd/model"
)

// Delete deletes the stream at key (B-5.4-01): hard when no fork references it, soft
// otherwise (B-4.2-10).
// Errors: model.ErrStreamNotFound, model.ErrStreamGone (already soft-deleted), storage.
func (e *Engine) Delete(key model.StreamKey) error {
	if err := e.checkWritable(); err != nil {
		return err
	}
	now := e.now()
	e.mu.Lock()
	s, err := e.lookupLocked(key.String())
	if err != nil || s == nil {
		e.mu.Unlock()
		if err == nil {
			err = model.ErrStreamNotFound
		}
		return err
	}
	s.mu.Lock()
	decided := s.lastLSN
	var o *op
	switch {
	case s.broken.Load() != nil:
		err = model.ErrStorageFailed
	case s.deleted:
		err = model.ErrStreamNotFound
	case s.m.SoftDeleted:
		err = model.ErrStreamGone
	case s.m.expired(now, s.access.Load()) && s.live.Load() == 0:
		err = e.expireLocked(s)
		if err == nil {
			err = expiredErr(s.m)
		}
	default:
		o, err = e.deleteLocked(s)
	}
	s.mu.Unlock()
	e.mu.Unlock()
	if err != nil {
		return e.refuse(decided, err)
	}
	return e.await(o)
}

// expireLocked deletes a stream whose lifetime ended; a stream still referenced by
// forks becomes soft-deleted. The op is queued, not awaited: the caller answers
// 404 either way. e.mu and s.mu are held.
func (e *Engine) expireLocked(s *stream) error {
	_, err := e.deleteLocked(s)
	return err
}

// deleteLocked decides the deletion of s and queues it. e.mu and s.mu are held.
func (e *Engine) deleteLocked(s *stream) (*op, error) {
	if s.m.Refs > 0 {
		nm := s.edit()
		nm.SoftDeleted = true
		s.m = nm
		o := &op{s: s, ch: storage.Change{SID: s.sid, Meta: s.storedMeta(nm)}, pub: func() { s.publish(nm, nil) }}
		if err := e.q.push(o); err != nil {
			return nil, err
		}
		s.lastLSN = o.lsn
		return o, nil
	}
	o := &op{s: s, ch: storage.Change{SID: s.sid}}
	victims := []*stream{s}
	if err := e.releaseSourceLocked(s.m, o, &victims); err != nil {
		return nil, err
	}
	var indexed []storage.Binding // the victims in the expiry index
	for _, v := range victims {
		o.ch.Unbind = append(o.ch.Unbind, storage.Binding{Name: v.key, Bucket: v.m.Bucket, SID: v.sid})
		if v.m.TTL != nil || v.m.ExpiresMs != nil {
			indexed = append(indexed, o.ch.Unbind[len(o.ch.Unbind)-1])
		}
	}
	released := o.pub // the surviving source's new reference count, if any
	o.pub = func() {
		if released != nil {
			released()
		}
		for _, v := range victims {
			v.publishDelete()
		}
		e.mu.Lock()
		for _, v := range victims {
			if e.streams[v.key] == v {
				delete(e.streams, v.key)
			}
			delete(e.byID, v.sid)
		}
		for _, v := range indexed {
			e.expiry.remove(v.Bucket, v.SID)
		}
		e.mu.Unlock()
	}
	if err := e.q.push(o); err != nil {
		return nil, err
	}
	for _, v := range victims {
		v.deleted = true
		v.lastLSN = o.lsn
		if b, ok := e.buckets[v.m.Bucket]; ok && b.rec.Streams > 0 {
			b.rec.Streams--
		}
	}
	return o, nil
}

// releaseSourceLocked drops m's reference on its fork source; a soft-deleted source left
// without references is deleted too, and so on up the chain (B-4.2-11). The changes join
// op o; hard-deleted sources are appended to victims. e.mu is held.
func (e *Engine) releaseSourceLocked(m *streamMeta, o *op, victims *[]*stream) error {
	for m.Fork != nil {
		src, err := e.byIDLocked(m.Fork.SourceID)
		if err != nil {
			return err
		}
		src.mu.Lock()
		nm := src.edit()
		if nm.Refs > 0 {
			nm.Refs--
		}
		if nm.Refs > 0 || !nm.SoftDeleted {
			src.m = nm
			o.ch.Also = append(o.ch.Also, src.storedMeta(nm))
			o.others = append(o.others, src)
			o.pub = func() { src.publish(nm, nil) }
			src.mu.Unlock()
			return nil
		}
		src.m = nm
		*victims = append(*victims, src)
		o.others = append(o.others, src)
		src.mu.Unlock()
		m = nm
	}
	return nil
}
