package engine

import (
	"github.com/dsd-project/dsd/engine/storage"
	"github.com/dsd-project/dsd/model"
)

// bucketRecord is the stored form of a bucket (extension §1).
type bucketRecord = storage.BucketRecord

// bucketState is a loaded bucket: decided state plus the lsn of its last change.
type bucketState struct {
	exists  bool
	rec     bucketRecord
	lastLSN uint64
}

// BucketInfo is what GET /{bucket_id} returns (extension §1.3).
type BucketInfo struct {
	ID        string
	Streams   int
	CreatedAt int64 // Unix ms
}

// bucketLocked returns the bucket's state, loading it when needed. e.mu is held.
func (e *Engine) bucketLocked(id string) (*bucketState, error) {
	if b, ok := e.buckets[id]; ok {
		return b, nil
	}
	rec, err := e.st.Bucket(id)
	if err != nil {
		return nil, err
	}
	b := &bucketState{}
	if rec != nil {
		b.exists, b.rec = true, *rec
	}
	e.buckets[id] = b
	return b, nil
}

// CreateBucket creates a bucket (extension §1.2). created is false when it already
// existed (the HTTP layer answers 409, ErrBucketExists).
// Errors: model.ErrBadBucketID, model.ErrReservedBucketID, storage errors.
func (e *Engine) CreateBucket(id string) (created bool, err error) {
	if err := model.CheckBucketID(id); err != nil {
		return false, err
	}
	if err := e.checkWritable(); err != nil {
		return false, err
	}
	e.mu.Lock()
	b, err := e.bucketLocked(id)
	if err != nil {
		e.mu.Unlock()
		return false, err
	}
	if b.exists {
		lsn := b.lastLSN
		e.mu.Unlock()
		return false, e.waitDurable(lsn)
	}
	b.exists = true
	b.rec = bucketRecord{CreatedMs: e.now().UnixMilli()}
	rec := b.rec
	o := &op{ch: storage.Change{Bucket: &storage.BucketPut{ID: id, Record: &rec}}}
	err = e.q.push(o)
	b.lastLSN = o.lsn
	e.mu.Unlock()
	if err != nil {
		return false, err
	}
	return true, e.await(o)
}

// Bucket returns a bucket's metadata (extension §1.3).
// Errors: model.ErrBadBucketID, model.ErrReservedBucketID, model.ErrBucketNotFound.
func (e *Engine) Bucket(id string) (BucketInfo, error) {
	if err := model.CheckBucketID(id); err != nil {
		return BucketInfo{}, err
	}
	e.mu.Lock()
	b, err := e.bucketLocked(id)
	if err == nil && b.exists {
		err = e.expireBucketLocked(id, b)
	}
	var info BucketInfo
	var lsn uint64
	if err == nil {
		lsn = b.lastLSN
		if b.exists {
			info = BucketInfo{ID: id, Streams: b.rec.Streams, CreatedAt: b.rec.CreatedMs}
		}
	}
	e.mu.Unlock()
	switch {
	case err != nil:
		return BucketInfo{}, err
	case info.ID == "":
		return BucketInfo{}, e.refuse(lsn, model.ErrBucketNotFound)
	}
	return info, e.waitDurable(lsn)
}

// bucketExists returns nil when the bucket exists (once its last change is durable),
// without Bucket's expiry pass. Errors: model.ErrBadBucketID, model.ErrBucketNotFound.
func (e *Engine) bucketExists(id string) error {
	if !model.ValidBucketID(id) {
		return model.ErrBadBucketID
	}
	e.mu.Lock()
	b, err := e.bucketLocked(id)
	var exists bool
	var lsn uint64
	if err == nil {
		exists, lsn = b.exists, b.lastLSN
	}
	e.mu.Unlock()
	switch {
	case err != nil:
		return err
	case !exists:
		return e.refuse(lsn, model.ErrBucketNotFound)
	}
	return e.waitDurable(lsn)
}

// DeleteBucket deletes an empty bucket (extension §1.5).
// Errors: model.ErrBadBucketID, model.ErrReservedBucketID, model.ErrBucketNotFound, model.ErrBucketNotEmpty.
func (e *Engine) DeleteBucket(id string) error {
	if err := model.CheckBucketID(id); err != nil {
		return err
	}
	if err := e.checkWritable(); err != nil {
		return err
	}
	e.mu.Lock()
	b, err := e.bucketLocked(id)
	if err == nil && b.exists {
		err = e.expireBucketLocked(id, b)
	}
	var lsn uint64
	switch {
	case err != nil:
	case !b.exists:
		err, lsn = model.ErrBucketNotFound, b.lastLSN
	case b.rec.Streams > 0:
		err, lsn = model.ErrBucketNotEmpty, b.lastLSN
	}
	if err != nil {
		e.mu.Unlock()
		return e.refuse(lsn, err)
	}
	b.exists = false
	b.rec = bucketRecord{}
	// Its subscriptions go with it (D10).
	o := &op{ch: storage.Change{Bucket: &storage.BucketPut{ID: id}, Subs: deleteBucketSubs(id)}}
	err = e.q.push(o)
	b.lastLSN = o.lsn
	e.mu.Unlock()
	if err != nil {
		return err
	}
	return e.await(o)
}

// expireBucketLocked deletes the bucket's streams whose lifetime has ended, so that its
// count and emptiness reflect live streams only (expiry is otherwise lazy, A-14): from
// the expiry index once it is complete (only the streams due are looked at), by a scan
// of the bucket's names before. The bucket's lastLSN then covers those deletions. e.mu
// is held.
func (e *Engine) expireBucketLocked(id string, b *bucketState) error {
	if b.rec.Streams == 0 || !e.mayHaveLifetimes() {
		return nil
	}
	if e.expiry.complete() {
		b.lastLSN = max(b.lastLSN, e.expireDueLocked(id, e.now()))
		return nil
	}
	// Only streams with a lifetime can have expired: the others are not loaded.
	var keys []string
	err := e.st.Names(id+"/", id+"/", func(name string, m *storage.Meta) bool {
		if m.TTL != nil || m.ExpiresMs != nil {
			keys = append(keys, name)
		}
		return true
	})
	if err != nil {
		return err
	}
	now := e.now()
	for _, k := range keys {
		s, err := e.lookupLocked(k)
		if err != nil || s == nil {
			continue
		}
		s.mu.Lock()
		if !s.deleted && !s.m.SoftDeleted && s.live.Load() == 0 && s.m.expired(now, s.access.Load()) {
			if err := e.expireLocked(s); err == nil {
				b.lastLSN = max(b.lastLSN, s.lastLSN)
			}
		}
		s.mu.Unlock()
	}
	return nil
}
