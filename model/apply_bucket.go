package model

import (
	"maps"
	"time"
)

// createBucket: PUT /{bucket_id} (X-1.2-03): 400 for an invalid id (X-1.1-01), 409 when
// the bucket exists, else 201. Buckets exist only once created explicitly (X-1.2-01).
func (s State) createBucket(c CreateBucket) (State, Result) {
	if err := CheckBucketID(c.Bucket); err != nil {
		return s, fail(StatusBadRequest, err)
	}
	if s.HasBucket(c.Bucket) {
		return s, fail(StatusConflict, ErrBucketExists)
	}
	b := maps.Clone(s.buckets)
	if b == nil {
		b = map[string]struct{}{}
	}
	b[c.Bucket] = struct{}{}
	s.buckets = b
	return s, Result{Status: StatusCreated, Location: true}
}

// getBucket: GET /{bucket_id} (X-1.3-01): 400 invalid id, 404 missing, else 200 with the
// number of streams in the bucket. Expired streams do not exist and are not
// counted; soft-deleted ones are (they occupy their paths, B-4.2-10).
func (s State) getBucket(c GetBucket, now time.Time) (State, Result) {
	if err := CheckBucketID(c.Bucket); err != nil {
		return s, fail(StatusBadRequest, err)
	}
	if !s.HasBucket(c.Bucket) {
		return s, fail(StatusNotFound, ErrBucketNotFound)
	}
	return s, Result{Status: StatusOK, Bucket: &BucketView{ID: c.Bucket, Streams: s.liveStreams(c.Bucket, now)}}
}

// deleteBucket: DELETE /{bucket_id}: 400 invalid id, 404 missing, 409 while it
// holds a stream, soft-deleted ones included (X-1.5-01; an expired stream is no longer
// held, A-14), else 204.
func (s State) deleteBucket(c DeleteBucket, now time.Time) (State, Result) {
	if err := CheckBucketID(c.Bucket); err != nil {
		return s, fail(StatusBadRequest, err)
	}
	if !s.HasBucket(c.Bucket) {
		return s, fail(StatusNotFound, ErrBucketNotFound)
	}
	if s.liveStreams(c.Bucket, now) > 0 {
		return s, fail(StatusConflict, ErrBucketNotEmpty)
	}
	b := maps.Clone(s.buckets)
	delete(b, c.Bucket)
	s.buckets = b
	return s, Result{Status: StatusNoContent}
}

// liveStreams counts the streams bound in bucket: expired ones are gone (Apply has
// applied expiry, A-14); soft-deleted ones still hold their paths (B-4.2-10) and count.
func (s State) liveStreams(bucket string, _ time.Time) int {
	n := 0
	for key := range s.streams {
		if key.Bucket == bucket {
			n++
		}
	}
	return n
}
