package model

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Config holds the server-defined parameters the state machine depends on.
type Config struct {
	// ReadChunkBytes is the size target of one catch-up response: whole messages
	// are added while the total stays within it, and there is always at least one. Zero
	// means the default, 1 MiB.
	ReadChunkBytes int
}

// DefaultReadChunkBytes is the default catch-up response size target.
const DefaultReadChunkBytes = 1 << 20

// State is the reference state of a server: its buckets and the current incarnation of
// every stream. It is a value: Apply returns a new State and never changes its receiver,
// so a State can be kept, compared and replayed. The zero State has no buckets and the
// default Config.
type State struct {
	cfg          Config
	buckets      map[string]struct{}
	streams      map[StreamKey]*stream
	incarnations uint64
}

// NewState returns the empty state of a server configured with cfg.
func NewState(cfg Config) State {
	if cfg.ReadChunkBytes <= 0 {
		cfg.ReadChunkBytes = DefaultReadChunkBytes
	}
	return State{cfg: cfg}
}

// Apply decides cmd at time now. It returns the state after the command and the
// response. It never mutates s, performs no IO and reads no clock: now is the only time
// it knows. Commands of unknown types panic (a programming error).
func (s State) Apply(cmd Command, now time.Time) (State, Result) {
	if s.cfg.ReadChunkBytes <= 0 {
		s.cfg.ReadChunkBytes = DefaultReadChunkBytes
	}
	s = s.settle(now)
	next, res := s.dispatch(cmd, now)
	return next, advertiseTarget(s, next, cmd, res, now)
}

// dispatch decides cmd on the settled state s.
func (s State) dispatch(cmd Command, now time.Time) (State, Result) {
	switch c := cmd.(type) {
	case CreateBucket:
		return s.createBucket(c)
	case GetBucket:
		return s.getBucket(c, now)
	case DeleteBucket:
		return s.deleteBucket(c, now)
	case CreateStream:
		return s.createStream(c, now)
	case AppendStream:
		return s.appendStream(c, now)
	case ReadStream:
		return s.readStream(c, now)
	case HeadStream:
		return s.headStream(c, now)
	case DeleteStream:
		return s.deleteStream(c, now)
	case GetAttrs:
		return s.getAttrs(c, now)
	case PutAttrs:
		return s.putAttrs(c, now)
	case AppendBatch:
		return s.appendBatch(c, now)
	case PublishSnapshot:
		return s.publishSnapshot(c, now)
	case GetSnapshot:
		return s.getSnapshot(c, now)
	case DeleteSnapshot:
		return s.deleteSnapshot(c, now)
	case SetRetention:
		return s.setRetention(c, now)
	case Bootstrap:
		return s.bootstrap(c, now)
	}
	panic(fmt.Sprintf("model: unknown command %T", cmd))
}

// Stream returns a view of the live stream at key as of now: expired streams do not
// exist and soft-deleted ones are not live (B-4.2-10). It does not change s.
func (s State) Stream(key StreamKey, now time.Time) (StreamView, bool) {
	st, ok := s.settle(now).streams[key]
	if !ok || st.softDeleted {
		return StreamView{}, false
	}
	return st.view(), true
}

// Streams returns the keys of every stored stream (expired ones included), sorted.
func (s State) Streams() []StreamKey {
	keys := slices.Collect(maps.Keys(s.streams))
	slices.SortFunc(keys, func(a, b StreamKey) int { return strings.Compare(a.String(), b.String()) })
	return keys
}

// HasBucket reports whether bucket exists.
func (s State) HasBucket(bucket string) bool {
	_, ok := s.buckets[bucket]
	return ok
}

// withStream returns s with key bound to st (st nil: unbound). The stream map is copied.
func (s State) withStream(key StreamKey, st *stream) State {
	m := maps.Clone(s.streams)
	if m == nil {
		m = map[StreamKey]*stream{}
	}
	if st == nil {
		delete(m, key)
	} else {
		m[key] = st
	}
	s.streams = m
	return s
}

// liveOrGone returns the live stream at key, or the response of a request that finds
// none: 404 when it is missing (or expired: Apply has applied expiry, A-14), 410
// STREAM_GONE when it is soft-deleted (B-4.2-10: GET, HEAD, POST and DELETE, and the
// extension resources of the stream).
func (s State) liveOrGone(key StreamKey, _ time.Time) (State, *stream, Result) {
	st := s.streams[key]
	switch {
	case st == nil:
		return s, nil, fail(StatusNotFound, ErrStreamNotFound)
	case st.softDeleted:
		return s, nil, fail(StatusGone, ErrStreamGone)
	}
	return s, st, Result{}
}

// touchLive is liveOrGone for a request that restarts the stream's sliding TTL (GET and
// POST, A-14): the returned state holds a copy of the stream accessed at now.
func (s State) touchLive(key StreamKey, now time.Time) (State, *stream, Result) {
	s, st, res := s.liveOrGone(key, now)
	if st == nil {
		return s, nil, res
	}
	st = st.clone()
	st.accessMs = now.UnixMilli()
	return s.withStream(key, st), st, Result{}
}

// checkKey validates a stream URL's ids (X-1.1; the model speaks the bucketed surface's
// ids, flat names being httpd's, CheckFlatName): a bad bucket id or stream id is 400
// before anything is looked up.
func checkKey(key StreamKey) error {
	if err := CheckBucketID(key.Bucket); err != nil {
		return err
	}
	return CheckStreamID(key.Bucket, key.Stream)
}

func offsetPtr(o Offset) *Offset { return &o }
