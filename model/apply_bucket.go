package model

import (
	"maps"
	"time"
)

// createBucket: PUT /{bucket_id} (X-1.2-03): 400 for an invalid id (X-1.1-01), 409 when
// the bucket exists, else 201. Buckets exist only once created explicitly (X-1.2-01).
func (s State) createBucket(c CreateBucket) (State, Result) {
	if !ValidBucketID(c.Bucket) {
		return s, fail(StatusBadRequest, ErrBadBucketID)
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
// counted.
func (s State) getBucket(c GetBucket, now time.Time) (State, Result) {
	if !ValidBucketID(c.Bucket) {
		return s, fail(StatusBadRequest, ErrBadBucketID)
	}
	if !s.HasBucket(c.Bucket) {
		return s, fail(StatusNotFound, ErrBucketNotFound)
	}
	return s, Result{Status: StatusOK, Bucket: &BucketView{ID: c.Bucket, Streams: s.liveStreams(c.Bucket, now)}}
}

// deleteBucket: DELETE /{bucket_id}: 400 invalid id, 404 missing, 409 while it
// holds a stream (X-1.5-01; an expired stream is no longer held, A-14), else 204.
func (s State) deleteBucket(c DeleteBucket, now time.Time) (State, Result) {
	if !ValidBucketID(c.Bucket) {
		return s, fail(StatusBadRequest, ErrBadBucketID)
	}
	if !s.HasBucket(c.Bucket) {
		return s, fail(StatusNotFound, ErrBucketNotFound)
	}
	if s.liveStreams(c.Bucket, now) > 0 {
		return s, fail(StatusConflict, ErrBucketNotEmpty)
	}
	for key := range s.streams {
		if key.Bucket == c.Bucket {
			s = s.withStream(key, nil) // expired leftovers go with the bucket
		}
	}
	b := maps.Clone(s.buckets)
	delete(b, c.Bucket)
	s.buckets = b
	return s, Result{Status: StatusNoContent}
}

// liveStreams counts the streams of bucket that have not expired at now.
func (s State) liveStreams(bucket string, now time.Time) int {
	n := 0
	for key, st := range s.streams {
		if key.Bucket == bucket && !st.expired(now) {
			n++
		}
	}
	return n
}
