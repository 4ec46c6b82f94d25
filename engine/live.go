package engine

import (
	"context"
	"sync/atomic"

	"github.com/dsd-project/dsd/model"
)

// Reader is an open live reader (long-poll or SSE, B-5.7, B-5.8) of one stream
// incarnation. While it is open the stream never expires. A stream deleted while
// the reader waits makes Read and Wait fail with model.ErrStreamNotFound (or
// model.ErrStreamGone once soft-deleted). Close it when done.
type Reader struct {
	e *Engine
	s *stream
}

// OpenReader opens a live reader of the stream at key and restarts its sliding TTL
// (B-5.1-05). Errors: model.ErrStreamNotFound, model.ErrStreamGone.
func (e *Engine) OpenReader(key model.StreamKey) (*Reader, StreamInfo, error) {
	s, v, err := e.holdReadable(key, true, func(s *stream) *atomic.Int32 { return &s.live })
	if err != nil {
		return nil, StreamInfo{}, err
	}
	return &Reader{e: e, s: s}, v.info(), nil
}

// Close releases the reader; the sliding TTL restarts from now.
func (r *Reader) Close() {
	r.s.access.Store(r.e.now().UnixMilli())
	r.s.live.Add(-1)
}

// Info returns the committed metadata.
func (r *Reader) Info() (StreamInfo, error) {
	v, err := r.e.viewOf(r.s, false)
	if err != nil {
		return StreamInfo{}, err
	}
	return v.info(), nil
}

// Read reads like Engine.Read, from this reader's incarnation.
func (r *Reader) Read(req ReadRequest) (ReadResult, error) {
	v, err := r.e.viewOf(r.s, false)
	if err != nil {
		return ReadResult{}, err
	}
	return r.e.readView(r.s, v, req)
}

// Wait blocks until the committed tail passes after, the stream closes or is deleted,
// or ctx ends. It returns the committed metadata; ctx's error when ctx ended first.
func (r *Reader) Wait(ctx context.Context, after model.Offset) (StreamInfo, error) {
	s := r.s
	for {
		s.mu.Lock()
		v, gone, ch := s.vis, s.visDeleted, s.waitCh()
		s.mu.Unlock()
		switch {
		case gone || v == nil:
			return StreamInfo{}, model.ErrStreamNotFound
		case v.SoftDeleted:
			return StreamInfo{}, model.ErrStreamGone
		case v.Tail > uint64(after) || v.Closed:
			return v.info(), nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return v.info(), ctx.Err()
		}
	}
}
