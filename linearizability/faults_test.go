package linearizability

import (
	"errors"
	"math/rand/v2"
	"sync"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/httpd"
	"github.com/dsd-project/dsd/model"
)

// Fault-injecting wrappers around a working store. Each breaks exactly one property, the
// checker must report each (done criterion 2 of issue 4), and they plug in at both levels:
// under the engine-level client directly, and under httpd for the HTTP-level one.

// lostDedup loses producer deduplication: a retry that the engine deduplicates is
// appended again, as a plain append, and acknowledged as new (B-5.2.1-03).
type lostDedup struct{ httpd.Store }

func (s lostDedup) Append(k model.StreamKey, req engine.AppendRequest) (engine.AppendResult, error) {
	res, err := s.Store.Append(k, req)
	if err != nil || res.Outcome != engine.Duplicate || len(req.Body) == 0 {
		return res, err
	}
	plain := req
	plain.Producer, plain.StreamSeq, plain.Close = nil, nil, false
	again, err := s.Store.Append(k, plain)
	if err != nil {
		return again, err
	}
	again.ProducerEpoch, again.ProducerSeq = req.Producer.Epoch, req.Producer.Seq
	return again, nil
}

// reorder acknowledges every fourth plain append at once with the offset it would get,
// holds it back, and applies it only after the next append to that stream: a pair of
// appends lands in the opposite order of their acknowledgements (B-4-01, B-8-01).
type reorder struct {
	httpd.Store
	mu   sync.Mutex
	held map[model.StreamKey]engine.AppendRequest
	n    int
}

func (s *reorder) Append(k model.StreamKey, req engine.AppendRequest) (engine.AppendResult, error) {
	if req.Producer != nil || req.StreamSeq != nil || req.Close || len(req.Body) == 0 {
		return s.Store.Append(k, req)
	}
	s.mu.Lock()
	if s.held == nil {
		s.held = map[model.StreamKey]engine.AppendRequest{}
	}
	if h, ok := s.held[k]; ok {
		delete(s.held, k)
		s.mu.Unlock()
		res, err := s.Store.Append(k, req)
		_, _ = s.Store.Append(k, h)
		return res, err
	}
	s.n++
	if s.n%4 != 0 {
		s.mu.Unlock()
		return s.Store.Append(k, req)
	}
	defer s.mu.Unlock()
	info, err := s.Store.Head(k)
	if err != nil || info.Closed {
		return s.Store.Append(k, req)
	}
	s.held[k] = req
	return engine.AppendResult{Outcome: engine.Appended, Tail: info.Tail + model.Offset(len(req.Body))}, nil
}

// staleCache serves every other read from the start out of a cache of the previous one
// (B-5.6-09: once an append returns 2xx, the next read shows it).
type staleCache struct {
	httpd.Store
	mu    sync.Mutex
	cache map[model.StreamKey]engine.ReadResult
	n     int
}

func (s *staleCache) Read(k model.StreamKey, req engine.ReadRequest) (engine.ReadResult, error) {
	if req.From.Kind != model.SpecStart || req.Record != nil {
		return s.Store.Read(k, req)
	}
	s.mu.Lock()
	if s.cache == nil {
		s.cache = map[model.StreamKey]engine.ReadResult{}
	}
	s.n++
	if c, ok := s.cache[k]; ok && s.n%2 == 0 {
		s.mu.Unlock()
		return c, nil
	}
	s.mu.Unlock()
	res, err := s.Store.Read(k, req)
	if err == nil {
		s.mu.Lock()
		s.cache[k] = res
		s.mu.Unlock()
	}
	return res, err
}

// lateClose acknowledges the first close of each stream without closing it, and
// closes it only after the next append: one more append gets in (B-4-04, B-5.2-07).
type lateClose struct {
	httpd.Store
	mu      sync.Mutex
	faked   map[model.StreamKey]bool
	pending map[model.StreamKey]bool
}

func (s *lateClose) Append(k model.StreamKey, req engine.AppendRequest) (engine.AppendResult, error) {
	s.mu.Lock()
	if s.faked == nil {
		s.faked, s.pending = map[model.StreamKey]bool{}, map[model.StreamKey]bool{}
	}
	if req.Close && !s.faked[k] {
		s.faked[k], s.pending[k] = true, true
		s.mu.Unlock()
		open := req
		open.Close = false
		var res engine.AppendResult
		var err error
		if len(req.Body) > 0 {
			res, err = s.Store.Append(k, open)
		} else {
			var info engine.StreamInfo
			info, err = s.Store.Head(k)
			res = engine.AppendResult{Outcome: engine.ClosedOnly, Tail: info.Tail}
			if p := req.Producer; p != nil {
				res.ProducerEpoch, res.ProducerSeq = p.Epoch, p.Seq
			}
		}
		res.Closed = err == nil
		return res, err
	}
	pending := s.pending[k]
	delete(s.pending, k)
	s.mu.Unlock()
	res, err := s.Store.Append(k, req)
	if pending && !req.Close {
		_, _ = s.Store.Append(k, engine.AppendRequest{Close: true})
	}
	return res, err
}

// flaky loses responses: now and then an append takes effect but its caller gets an
// error, or fails without taking effect. Both are legal behaviours for an unknown
// outcome, so the checker must accept the history (etcd's failed-request handling).
type flaky struct {
	httpd.Store
	mu  sync.Mutex
	rng *rand.Rand
}

var errLostResponse = errors.New("flaky: response lost")

func (s *flaky) Append(k model.StreamKey, req engine.AppendRequest) (engine.AppendResult, error) {
	s.mu.Lock()
	r := s.rng.IntN(100)
	s.mu.Unlock()
	switch {
	case r < 4:
		_, _ = s.Store.Append(k, req)
		return engine.AppendResult{}, errLostResponse
	case r < 7:
		return engine.AppendResult{}, errLostResponse
	}
	return s.Store.Append(k, req)
}

// batchDrop drops the second frame of every other append-batch request of two or more
// frames and acknowledges it as if it had been appended at the first frame's offset
// (extension §4: each frame is its own append).
type batchDrop struct {
	httpd.Store
	mu sync.Mutex
	n  int
}

func (s *batchDrop) AppendBatch(k model.StreamKey, mt string, frames [][]byte) ([]engine.FrameAck, bool, error) {
	s.mu.Lock()
	s.n++
	drop := len(frames) >= 2 && s.n%2 == 0
	s.mu.Unlock()
	if !drop {
		return s.Store.AppendBatch(k, mt, frames)
	}
	kept := append(append([][]byte{}, frames[0]), frames[2:]...)
	acks, isJSON, err := s.Store.AppendBatch(k, mt, kept)
	if err != nil {
		return acks, isJSON, err
	}
	out := append([]engine.FrameAck{acks[0], acks[0]}, acks[1:]...)
	return out, isJSON, nil
}

// AppendBatch loses the responses of append-batch requests the way Append does.
func (s *flaky) AppendBatch(k model.StreamKey, mt string, frames [][]byte) ([]engine.FrameAck, bool, error) {
	s.mu.Lock()
	r := s.rng.IntN(100)
	s.mu.Unlock()
	switch {
	case r < 4:
		_, _, _ = s.Store.AppendBatch(k, mt, frames)
		return nil, false, errLostResponse
	case r < 7:
		return nil, false, errLostResponse
	}
	return s.Store.AppendBatch(k, mt, frames)
}

// lostSnapshot acknowledges every other snapshot publish without storing it (extension
// §2.2: a 204 publish is the visible snapshot from then on).
type lostSnapshot struct {
	httpd.Store
	mu sync.Mutex
	n  int
}

func (s *lostSnapshot) PublishSnapshot(k model.StreamKey, req engine.SnapshotRequest) (engine.SnapshotInfo, error) {
	s.mu.Lock()
	s.n++
	lose := s.n%2 == 1
	s.mu.Unlock()
	if !lose {
		return s.Store.PublishSnapshot(k, req)
	}
	return engine.SnapshotInfo{Offset: req.At.Offset, ContentType: req.ContentType,
		Digest: model.SnapshotDigest(req.ContentType, req.Body), Size: int64(len(req.Body))}, nil
}

// recordsOverlap reports every fourth JSON append's record range one ordinal early, as
// if it overlapped the previous append's (extension §6.3, §6.13: ordinals contiguous,
// never reused).
type recordsOverlap struct {
	httpd.Store
	mu sync.Mutex
	n  int
}

func (s *recordsOverlap) Append(k model.StreamKey, req engine.AppendRequest) (engine.AppendResult, error) {
	res, err := s.Store.Append(k, req)
	if err != nil || !res.JSON || res.RecordStart == 0 || res.Outcome != engine.Appended {
		return res, err
	}
	s.mu.Lock()
	s.n++
	skew := s.n%4 == 0
	s.mu.Unlock()
	if skew {
		res.RecordStart--
		res.RecordNext--
	}
	return res, err
}

// forkAtTail forks at the source's current tail, not at Stream-Fork-Offset: the fork
// takes in source appends made after the offset the client asked for (B-4.2-02,
// B-4.2-18).
type forkAtTail struct{ httpd.Store }

func (s forkAtTail) Create(k model.StreamKey, req engine.CreateRequest) (engine.CreateResult, error) {
	if req.Fork != nil {
		f := *req.Fork
		f.Offset = nil
		req.Fork = &f
	}
	return s.Store.Create(k, req)
}

// softDeleteIsHard hard-deletes a stream its forks still reference: the fork keeps its
// data (dsd's engine stores it), but the source's path answers 404 instead of 410 and
// takes a new stream (B-4.2-10).
type softDeleteIsHard struct{ httpd.Store }

func (s softDeleteIsHard) Read(k model.StreamKey, req engine.ReadRequest) (engine.ReadResult, error) {
	res, err := s.Store.Read(k, req)
	if errors.Is(err, model.ErrStreamGone) {
		err = model.ErrStreamNotFound
	}
	return res, err
}
