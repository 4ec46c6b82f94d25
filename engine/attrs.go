package engine

import (
	"bytes"

	"github.com/dsd-project/dsd/engine/storage"
	"github.com/dsd-project/dsd/model"
)

// Attrs returns a stream's attribute object (extension §5.3), nil when none is set.
// Errors: model.ErrStreamNotFound, model.ErrStreamGone.
func (e *Engine) Attrs(key model.StreamKey) ([]byte, error) {
	_, v, err := e.readable(key, false)
	if err != nil {
		return nil, err
	}
	return v.Attrs, nil
}

// SetAttrs replaces a stream's attribute object with attrs, already normalized by
// model.NormalizeAttrs (nil clears it). It is allowed after close and changes nothing
// else: not offsets, ETags, content type, closure, snapshots or reads (extension §5.4).
// Errors: model.ErrStreamNotFound, model.ErrStreamGone, storage errors.
func (e *Engine) SetAttrs(key model.StreamKey, attrs []byte) error {
	if err := e.checkWritable(); err != nil {
		return err
	}
	s, err := e.lookupKey(key)
	if err != nil || s == nil {
		if err == nil {
			err = model.ErrStreamNotFound
		}
		return err
	}
	now := e.now()
	s.mu.Lock()
	if s.evicted {
		s.mu.Unlock()
		return e.SetAttrs(key, attrs)
	}
	if err := e.liveForWrite(s, now); err != nil {
		lsn := s.lastLSN
		s.mu.Unlock()
		return e.refuse(lsn, err)
	}
	if bytes.Equal(s.m.Attrs, attrs) {
		lsn := s.lastLSN
		s.mu.Unlock()
		return e.waitDurable(lsn)
	}
	nm := s.edit()
	nm.Attrs = attrs
	o := &op{s: s, ch: storage.Change{SID: s.sid, Meta: s.storedMeta(nm)}, pub: func() { s.publish(nm, nil) }}
	if err := e.q.push(o); err != nil {
		s.mu.Unlock()
		return err
	}
	s.m, s.lastLSN = nm, o.lsn
	s.mu.Unlock()
	return e.await(o)
}
