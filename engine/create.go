package engine

import (
	"bytes"
	"time"

	"github.com/dsd-project/dsd/engine/storage"

	"github.com/dsd-project/dsd/model"
)

// CreateRequest is a parsed PUT {stream} (B-5.1, extension §5.2).
type CreateRequest struct {
	ContentType string     // as given; "" means the default (B-5.1-03)
	MediaType   string     // normalized ContentType ("" for the default)
	TTL         *uint64    // Stream-TTL seconds
	ExpiresAt   *time.Time // Stream-Expires-At
	Closed      bool       // Stream-Closed: true (B-5.1-09)
	Body        []byte     // initial content
	Attrs       []byte     // normalized Stream-Attrs; nil = none (extension §5.2)
	Fork        *ForkRequest
}

// CreateResult is the outcome of Create: Created is false for an idempotent re-create
// (200, B-5.1-01). RecordStart/RecordNext acknowledge the records the body created
// (extension §6.3).
type CreateResult struct {
	Created     bool
	Info        StreamInfo
	RecordStart uint64
	RecordNext  uint64
}

// Create creates the stream at key, or confirms an identical existing one.
// Errors: model.ErrBucketNotFound, model.ErrConfigMismatch, model.ErrStreamDeletedPut,
// model.ErrInvalidJSON, fork errors, storage errors.
func (e *Engine) Create(key model.StreamKey, req CreateRequest) (CreateResult, error) {
	if err := e.checkWritable(); err != nil {
		return CreateResult{}, err
	}
	if req.ContentType == "" && req.Fork == nil {
		req.ContentType, req.MediaType = model.DefaultContentType, model.DefaultContentType
	}
	var msgs [][]byte
	var parseErr error
	if model.IsJSON(req.MediaType) && len(req.Body) > 0 && req.Fork == nil {
		msgs, parseErr = model.FlattenJSON(req.Body, true)
	}
	now := e.now()

	e.mu.Lock()
	b, err := e.bucketLocked(key.Bucket)
	if err != nil || !b.exists {
		e.mu.Unlock()
		if err == nil {
			err = e.refuse(b.lastLSN, model.ErrBucketNotFound)
		}
		return CreateResult{}, err
	}
	s, err := e.lookupLocked(key.String())
	if err != nil {
		e.mu.Unlock()
		return CreateResult{}, err
	}
	if s != nil {
		res, lsn, done, err := e.existingForCreate(s, &req, now)
		if done {
			e.mu.Unlock()
			return res, e.refuse(lsn, err)
		}
	}
	if parseErr != nil {
		e.mu.Unlock()
		return CreateResult{}, parseErr
	}
	if req.Fork != nil {
		res, o, err := e.createForkLocked(key, b, &req, now)
		e.mu.Unlock()
		if err != nil {
			return CreateResult{}, err
		}
		return res, e.await(o)
	}
	res, o, err := e.createLocked(key, b, &req, msgs, now)
	e.mu.Unlock()
	if err != nil {
		return CreateResult{}, err
	}
	return res, e.await(o)
}

// existingForCreate handles a PUT on a bound path. done is false when the path is free
// after all (its stream is being deleted, or has expired and was deleted here).
// e.mu is held.
func (e *Engine) existingForCreate(s *stream, req *CreateRequest, now time.Time) (res CreateResult, lsn uint64, done bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken.Load() != nil {
		return res, 0, true, model.ErrStorageFailed
	}
	if s.deleted {
		return res, 0, false, nil
	}
	m := s.m
	if m.SoftDeleted {
		return res, s.lastLSN, true, model.ErrStreamDeletedPut
	}
	if m.expired(now, s.access.Load()) && s.live.Load() == 0 {
		if err := e.expireLocked(s); err != nil {
			return res, 0, true, err
		}
		if s.m.SoftDeleted {
			return res, s.lastLSN, true, model.ErrStreamDeletedPut
		}
		return res, 0, false, nil
	}
	if !sameConfig(m, req) {
		return res, s.lastLSN, true, model.ErrConfigMismatch
	}
	rn := m.RecordNext
	return CreateResult{Info: m.info(), RecordStart: rn, RecordNext: rn}, s.lastLSN, true, nil
}

// sameConfig compares a create request with an existing stream (B-5.1-01, B-5.1-02,
// A-10, extension §5.2): media type, TTL, expiry, closure, attributes, fork parameters.
func sameConfig(m *streamMeta, req *CreateRequest) bool {
	if m.Fork != nil || req.Fork != nil {
		return sameForkConfig(m, req)
	}
	if m.MediaType != req.MediaType || m.Closed != req.Closed {
		return false
	}
	if !sameTTL(m.TTL, req.TTL) || !sameExpiry(m.ExpiresMs, req.ExpiresAt) {
		return false
	}
	return bytes.Equal(m.Attrs, req.Attrs)
}

func sameTTL(a, b *uint64) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

func sameExpiry(ms *int64, t *time.Time) bool {
	return (ms == nil) == (t == nil) && (ms == nil || *ms == t.UnixMilli())
}

// createLocked decides a new plain stream and queues it. e.mu is held.
func (e *Engine) createLocked(key model.StreamKey, b *bucketState, req *CreateRequest, msgs [][]byte, now time.Time) (CreateResult, *op, error) {
	m := e.newMeta(key, req, now)
	entries := unitMessages(0, req.Body, msgs, m.isJSON())
	if len(req.Body) == 0 || (m.isJSON() && len(msgs) == 0) {
		entries = nil
	}
	m.Tail = unitBytes(entries)
	if m.isJSON() {
		m.RecordNext = uint64(len(entries))
	}
	o, err := e.queueCreate(m, b, entries, nil)
	if err != nil {
		return CreateResult{}, nil, err
	}
	return CreateResult{Created: true, Info: m.info(), RecordStart: 0, RecordNext: m.RecordNext}, o, nil
}

// newMeta builds the meta of a new incarnation, taking a fresh sid. e.mu is held.
func (e *Engine) newMeta(key model.StreamKey, req *CreateRequest, now time.Time) *streamMeta {
	e.nextSID++
	ms := now.UnixMilli()
	m := &streamMeta{
		ID: e.nextSID, Bucket: key.Bucket, Stream: key.Stream,
		ContentType: req.ContentType, MediaType: req.MediaType,
		CreatedMs: ms, LastWriteMs: ms, AccessMs: ms,
		TTL: req.TTL, Closed: req.Closed, CreateClosed: req.Closed, Attrs: req.Attrs,
	}
	if req.ExpiresAt != nil {
		v := req.ExpiresAt.UnixMilli()
		m.ExpiresMs = &v
	}
	return m
}

// queueCreate binds m's path to a new stream holding entries and queues the op. The
// stream is visible to writers at once and to readers once committed. snapBody is the
// body of m.Snapshot, when set. also are further meta changes committed and published
// with it. e.mu is held.
func (e *Engine) queueCreate(m *streamMeta, b *bucketState, entries []cachedMsg, snapBody []byte, also ...metaChange) (*op, error) {
	s := newStream(m, false, e.opts.TailCacheBytes)
	s.cache.reset(0)
	if m.Fork != nil {
		s.cache.reset(m.Fork.Anchor)
	}
	firstRec := m.RecordNext - uint64(len(entries))
	if !m.isJSON() {
		firstRec = 0
	}
	ch := storage.Change{SID: m.ID, Bind: &storage.Binding{Name: s.key, Bucket: m.Bucket, SID: m.ID},
		Messages: entries, Records: m.isJSON(), FirstRecord: firstRec, Meta: m.stored()}
	if m.Snapshot != nil {
		ch.PutSnapshot = &storage.SnapshotBody{Offset: m.Snapshot.Offset, Body: snapBody}
	}
	var others []*stream
	for _, c := range also {
		ch.Also = append(ch.Also, c.s.storedMeta(c.after))
		others = append(others, c.s)
	}
	o := &op{s: s, others: others, ch: ch,
		pub: func() {
			if m.TTL != nil || m.ExpiresMs != nil {
				e.lifetimes.Add(1) // once committed: a scan that starts later sees it
				e.indexLifetime(m, s.key, s.access.Load())
			}
			s.publish(m, entries)
			for _, c := range also {
				c.s.publish(c.after, nil)
			}
		},
	}
	if err := e.q.push(o); err != nil {
		return nil, err
	}
	s.lastLSN = o.lsn
	b.rec.Streams++
	e.streams[s.key] = s
	e.byID[m.ID] = s
	return o, nil
}
