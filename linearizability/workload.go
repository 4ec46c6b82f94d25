package linearizability

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// Config sizes a recorded run.
type Config struct {
	// Clients is the number of concurrent clients (default 8).
	Clients int
	// Ops is the number of operations of the main phase (default 2000); creates, the
	// closing phase and the final reads come on top.
	Ops int
	// Streams is the number of streams, one porcupine partition each (default 4).
	Streams int
	// Followers is the number of live readers per stream and live mode (default 1).
	Followers int
	// Seed seeds every random choice (0: random; the value used is in Run.Seed).
	Seed uint64
	// Prefix starts every stream name (default: a random run id).
	Prefix string
	// LiveTimeout bounds how long live readers may take to reach EOF once every stream
	// is closed (default 30 s).
	LiveTimeout time.Duration
	// ResumeChecks is how many offsets per transcript are re-read to check resumability
	// (default 8).
	ResumeChecks int
	// ExclusiveConflicts runs each close and each Stream-Seq append with no other
	// operation in flight on its stream, so that no request can be refused because of a
	// write that is decided but not yet durable. It weakens the check, and exists to tell
	// such a bug (dsd's KI-2 before 5c49ed9: 409 STREAM_CLOSED sent before the close it
	// reveals had committed) from others; leave it off to test a server fully.
	ExclusiveConflicts bool
	// ConcurrentBootstrap runs /bootstrap requests alongside writes. Off, each runs with
	// no write in flight on its stream: it isolates a bug like dsd's KI-5 (fixed: a
	// bootstrap could see a commit before reads did) from others.
	ConcurrentBootstrap bool
	// BaseOnly leaves out the extension operations (append-batch, snapshots, retention,
	// record coordinates, forks), for servers that implement only the base protocol.
	BaseOnly bool
	// Extensions lists the extensions whose operations run, by the conformance kit's ids
	// (ExtBatch, ExtSnapshot, ExtBootstrap, ExtRecords, ExtFork); nil means all of them.
	// cmd/dslincheck probes the server for them as dsconform's --extensions auto does.
	Extensions []string
}

// The extension ids a run can use (the conformance kit's ext: labels).
const (
	ExtBatch     = "append-batch"               // extension §4: append-batch requests
	ExtSnapshot  = "snapshot"                   // extension §2: snapshots, retention, snapshot reads
	ExtBootstrap = "bootstrap"                  // extension §3: /bootstrap reads
	ExtRecords   = "json-record-coordinates-v1" // extension §6: JSON streams with record coordinates
	ExtFork      = "fork"                       // base §4.2: forks
)

// has reports whether the run uses extension id.
func (c Config) has(id string) bool {
	if c.BaseOnly {
		return false
	}
	if c.Extensions == nil {
		return true
	}
	for _, e := range c.Extensions {
		if e == id {
			return true
		}
	}
	return false
}

func (c *Config) defaults() {
	if c.Clients == 0 {
		c.Clients = 8
	}
	if c.Ops == 0 {
		c.Ops = 2000
	}
	if c.Streams == 0 {
		c.Streams = 4
	}
	if c.Followers == 0 {
		c.Followers = 1
	}
	if c.Seed == 0 {
		var b [8]byte
		_, _ = rand.Read(b[:])
		c.Seed = uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 | uint64(b[4])<<32 |
			uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
	}
	if c.Prefix == "" {
		var b [6]byte
		_, _ = rand.Read(b[:])
		c.Prefix = "lin-" + hex.EncodeToString(b[:])
	}
	if c.LiveTimeout == 0 {
		c.LiveTimeout = 30 * time.Second
	}
	if c.ResumeChecks == 0 {
		c.ResumeChecks = 8
	}
}

// Run is a recorded run: its history, the resumability violations found while the
// server was still up, and the configuration used.
type Run struct {
	History History
	Errors  []error
	Config  Config
}

// Record runs the workload against client and records it.
//
// Every client first creates every stream. In the main phase each client repeatedly
// picks a stream and an operation: a plain append (a unique body stamped with the
// client and a request counter), an idempotent producer append (its own producer per
// stream, retrying the same triple after an unknown outcome and sometimes on purpose,
// with the occasional epoch claim, stale epoch and sequence gap), an append with
// Stream-Seq from a shared counter (so concurrent ones race), a read from -1, a HEAD, or
// a re-create. Streams are closed one by one during the second half (close-only,
// append-and-close, or with a producer), while clients keep appending to them. At the
// end every stream is closed and read once more: that final content is what live
// readers are checked against. Live readers follow every stream from the start in each
// mode the client supports, resuming now and then, until EOF.
func Record(ctx context.Context, client Client, cfg Config) (Run, error) {
	cfg.defaults()
	run := Run{Config: cfg}
	if err := client.Setup(); err != nil {
		return run, fmt.Errorf("setup: %w", err)
	}
	rec := NewRecorder()
	w := &workload{cfg: cfg, client: client, rec: rec}
	for i := 0; i < cfg.Streams; i++ {
		sp := &streamPlan{name: fmt.Sprintf("%s-%d%s", cfg.Prefix, i, roleOf(i, cfg).suffix()), role: roleOf(i, cfg),
			closeAt: int64(float64(cfg.Ops) * (0.5 + 0.45*float64(i+1)/float64(cfg.Streams+1)))}
		w.streams = append(w.streams, sp)
	}
	if cfg.has(ExtFork) {
		w.planForks()
	}
	var wg sync.WaitGroup
	for c := 0; c < cfg.Clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			cr := rec.Client()
			for _, s := range w.streams {
				if s.role != roleFork {
					cr.Do(Input{Kind: OpCreate, Stream: s.name}, func() Output { return client.Create(s.name) })
				}
			}
		}(c)
	}
	wg.Wait()

	liveCtx, stopLive := context.WithCancelCause(ctx)
	defer stopLive(nil)
	transcripts := w.startFollowers(liveCtx)

	for c := 0; c < cfg.Clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			w.clientLoop(ctx, c)
		}(c)
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return run, err
	}

	final := rec.Client()
	for _, s := range w.streams {
		if s.role == roleFork && !s.forked.Load() {
			continue // never created (or with an unknown outcome)
		}
		cr := final
		cr.Do(Input{Kind: OpAppend, Stream: s.name, Close: true}, func() Output {
			return client.Append(Input{Kind: OpAppend, Stream: s.name, Close: true})
		})
		var content []byte
		out := cr.Do(Input{Kind: OpRead, Stream: s.name}, func() Output {
			o, data := client.ReadAll(s.name)
			content = data
			return o
		})
		if out.Status != 200 {
			// An observation like any other (a 404 from a stale cache, say): the model
			// judges the read, and live readers of s have no final content to compare.
			continue
		}
		run.History.Finals = append(run.History.Finals, Final{Stream: s.name, Content: content,
			Offset: out.Offset, Closed: out.Closed})
	}
	timer := time.AfterFunc(cfg.LiveTimeout, func() {
		stopLive(errors.New("live readers did not reach EOF within the live timeout"))
	})
	run.History.Live = transcripts()
	timer.Stop()
	run.Errors = w.checkResume(run.History)
	w.deleteForkedSources(final) // after the resumability checks, which read every source
	run.History.Ops = rec.Ops()
	return run, nil
}

// streamPlan is a stream of the run and when it gets closed.
type streamPlan struct {
	// mu orders writes on the stream: every write holds it shared, snapshot and
	// retention requests (and, with ExclusiveConflicts, conflict-prone writes) alone.
	mu        sync.RWMutex
	name      string
	role      role
	closeAt   int64 // main-phase operation count after which it is closed
	closed    atomic.Bool
	streamSeq atomic.Uint64

	snapMu   sync.Mutex
	lastBlob string // the last snapshot blob published (for idempotent republishing)

	// Forks (roleFork): the source, when to fork it, and the fork request once made.
	source    *streamPlan
	forkAt    int64
	forkTried atomic.Bool
	forked    atomic.Bool // the fork request answered 201 or 200
	forkIn    atomic.Pointer[Input]
}

type workload struct {
	cfg     Config
	client  Client
	rec     *Recorder
	streams []*streamPlan
	ops     atomic.Int64
}

// producerPlan is one client's producer on one stream.
type producerPlan struct {
	epoch, next uint64
	retry       *Input // a triple whose outcome is unknown: send it again
	last        *Input // the last accepted append, for deliberate retries
}

func (w *workload) clientLoop(ctx context.Context, c int) {
	rng := mrand.New(mrand.NewPCG(w.cfg.Seed, uint64(c)+1))
	cr := w.rec.Client()
	producers := make([]producerPlan, len(w.streams))
	reqs := 0
	unique := func() string {
		reqs++
		pad := make([]byte, rng.IntN(40))
		for i := range pad {
			pad[i] = 'a' + byte(rng.IntN(26))
		}
		return fmt.Sprintf("c%d.%d.%s|", c, reqs, pad)
	}
	for ctx.Err() == nil {
		n := w.ops.Add(1)
		if n > int64(w.cfg.Ops) {
			return
		}
		si := rng.IntN(len(w.streams))
		s := w.streams[si]
		body := func() string { return s.role.body(rng, unique) }
		if n >= s.closeAt && s.closed.CompareAndSwap(false, true) {
			w.exclusive(s, func() { w.close(cr, rng, s, body, &producers[si], c) })
			continue
		}
		r := rng.IntN(100)
		if r >= 52 && r < 57 {
			w.exclusive(s, func() { w.streamSeqAppend(cr, rng, s, body) })
			continue
		}
		if r >= 90 && r < 96 && w.snapshots(s) {
			w.snapshotSection(cr, rng, s, c)
			continue
		}
		if r >= 96 && r < 99 && w.snapshotReads(s) && !w.cfg.ConcurrentBootstrap {
			s.mu.Lock()
			w.snapshotOp(cr, rng, s)
			s.mu.Unlock()
			continue
		}
		if s.role == roleFork && n >= s.forkAt && s.forkTried.CompareAndSwap(false, true) {
			w.createFork(cr, s, body)
			continue
		}
		if r >= 90 && s.role == roleFork {
			w.shared(s, func() { w.repeatFork(cr, s) })
			continue
		}
		if r >= 86 && r < 90 && s.role == roleJSON {
			w.shared(s, func() { w.recordOp(cr, rng, s, body) })
			continue
		}
		w.shared(s, func() { w.op(cr, rng, r, s, body, &producers[si], c) })
	}
}

// exclusive runs f alone on s when ExclusiveConflicts is set, else as shared.
func (w *workload) exclusive(s *streamPlan, f func()) {
	if !w.cfg.ExclusiveConflicts {
		w.shared(s, f)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f()
}

// shared runs f alongside other shared operations on s.
func (w *workload) shared(s *streamPlan, f func()) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	f()
}

// streamSeqAppend appends with the stream's next Stream-Seq value, or now and then an
// old one (409).
func (w *workload) streamSeqAppend(cr *ClientRecorder, rng *mrand.Rand, s *streamPlan, body func() string) {
	seq := s.streamSeq.Add(1)
	if rng.IntN(5) == 0 && seq > 3 {
		seq -= 3
	}
	in := Input{Kind: OpAppend, Stream: s.name, Body: body(), StreamSeq: fmt.Sprintf("%010d", seq)}
	cr.Do(in, func() Output { return w.client.Append(in) })
}

// op runs one operation of the main phase, chosen by r in [0, 100).
func (w *workload) op(cr *ClientRecorder, rng *mrand.Rand, r int, s *streamPlan, body func() string, p *producerPlan, c int) {
	switch {
	case r < 24 || (r < 30 && !w.cfg.has(ExtBatch)):
		in := Input{Kind: OpAppend, Stream: s.name, Body: body()}
		cr.Do(in, func() Output { return w.client.Append(in) })
	case r < 30:
		w.batch(cr, rng, s, body)
	case r < 52:
		w.producerAppend(cr, rng, s, body, p, c)
	case r < 75:
		cr.Do(Input{Kind: OpRead, Stream: s.name}, func() Output { o, _ := w.client.ReadAll(s.name); return o })
	case r < 90:
		cr.Do(Input{Kind: OpHead, Stream: s.name}, func() Output { return w.client.Head(s.name) })
	case r >= 96 && r < 99 && w.snapshotReads(s) && w.cfg.ConcurrentBootstrap:
		w.snapshotOp(cr, rng, s)
	default:
		cr.Do(Input{Kind: OpCreate, Stream: s.name}, func() Output { return w.client.Create(s.name) })
	}
}

// batch sends one append-batch request of one to four frames, each a unique body
// (extension §4).
func (w *workload) batch(cr *ClientRecorder, rng *mrand.Rand, s *streamPlan, body func() string) {
	in := Input{Kind: OpBatch, Stream: s.name, Frames: make([]string, 1+rng.IntN(4))}
	for i := range in.Frames {
		in.Frames[i] = body()
	}
	cr.Do(in, func() Output { return w.client.AppendBatch(s.name, in.Frames) })
}

// producerAppend sends the producer's next append, or one of its deliberate misuses.
func (w *workload) producerAppend(cr *ClientRecorder, rng *mrand.Rand, s *streamPlan, body func() string, p *producerPlan, c int) {
	id := fmt.Sprintf("c%d", c)
	in := Input{Kind: OpAppend, Stream: s.name}
	switch r := rng.IntN(100); {
	case p.retry != nil:
		in = *p.retry
	case r < 15 && p.last != nil:
		in = *p.last // a retry of an accepted append: 204
	case r < 19 && p.epoch > 0:
		in.Body, in.Producer = body(), &Producer{ID: id, Epoch: p.epoch - 1, Seq: 0} // zombie: 403
	case r < 23:
		in.Body, in.Producer = body(), &Producer{ID: id, Epoch: p.epoch, Seq: p.next + 1} // gap: 409
	case r < 27:
		in.Body, in.Producer = body(), &Producer{ID: id, Epoch: p.epoch + 1, Seq: 0} // epoch claim
	default:
		in.Body, in.Producer = body(), &Producer{ID: id, Epoch: p.epoch, Seq: p.next}
	}
	out := cr.Do(in, func() Output { return w.client.Append(in) })
	p.learn(in, out)
}

// learn updates a producer's plan from a response.
func (p *producerPlan) learn(in Input, out Output) {
	pr := in.Producer
	p.retry = nil
	switch {
	case out.Unknown():
		p.retry = &in
	case out.Status == 200 || (out.Status == 204 && pr.Seq >= p.next && pr.Epoch >= p.epoch):
		p.epoch, p.next = pr.Epoch, pr.Seq+1
		p.last = &in
	case out.Status == 403 && out.Epoch != nil && *out.Epoch > p.epoch:
		p.epoch, p.next, p.last = *out.Epoch+1, 0, nil
	case out.Status == 409 && out.Expected != nil && pr.Epoch == p.epoch:
		p.next = *out.Expected
	}
}

// close closes s: close-only, append-and-close, or append-and-close by the client's
// producer.
func (w *workload) close(cr *ClientRecorder, rng *mrand.Rand, s *streamPlan, body func() string, p *producerPlan, c int) {
	in := Input{Kind: OpAppend, Stream: s.name, Close: true}
	switch rng.IntN(3) {
	case 1:
		in.Body = body()
	case 2:
		in.Body, in.Producer = body(), &Producer{ID: fmt.Sprintf("c%d", c), Epoch: p.epoch, Seq: p.next}
	}
	out := cr.Do(in, func() Output { return w.client.Append(in) })
	if in.Producer != nil {
		p.learn(in, out)
	}
}

// startFollowers starts the live readers; the returned function waits for them and
// returns their transcripts.
func (w *workload) startFollowers(ctx context.Context) func() []Transcript {
	var mu sync.Mutex
	var out []Transcript
	var wg sync.WaitGroup
	n := 0
	for _, s := range w.streams {
		if s.role.snapshots() || s.role == roleFork {
			continue // retention may pass a lagging reader (410); forks are made later
		}
		for _, mode := range w.client.LiveModes() {
			for f := 0; f < w.cfg.Followers; f++ {
				n++
				rng := mrand.New(mrand.NewPCG(w.cfg.Seed, 1000+uint64(n)))
				wg.Add(1)
				go func(stream, mode string) {
					defer wg.Done()
					t := w.client.Follow(ctx, stream, mode, rng)
					mu.Lock()
					out = append(out, t)
					mu.Unlock()
				}(s.name, mode)
			}
		}
	}
	return func() []Transcript {
		wg.Wait()
		return out
	}
}

// checkResume re-reads from offsets the live readers were given: each must return
// exactly the rest of the final content (B-5.8-07, B-8-01).
func (w *workload) checkResume(h History) []error {
	finals := map[string]Final{}
	for _, f := range h.Finals {
		finals[f.Stream] = f
	}
	var errs []error
	rng := mrand.New(mrand.NewPCG(w.cfg.Seed, 99))
	for _, t := range h.Live {
		f, ok := finals[t.Stream]
		if !ok || len(t.Events) == 0 {
			continue
		}
		pos := t.positions()
		for k := 0; k < w.cfg.ResumeChecks; k++ {
			i := rng.IntN(len(t.Events))
			ev := t.Events[i]
			if ev.Next == "" || pos[i] > uint64(len(f.Content)) {
				continue
			}
			data, next, err := w.client.ReadFrom(t.Stream, ev.Next)
			switch {
			case err != nil:
				errs = append(errs, fmt.Errorf("%s reader of %s: %w: reading from %q: %v", t.Mode, t.Stream,
					errBrokeResumable, ev.Next, err))
			case string(data) != string(f.Content[pos[i]:]) || next != f.Offset:
				errs = append(errs, fmt.Errorf("%s reader of %s: %w: from %q (position %d) read %d bytes ending at %q, want %d ending at %q",
					t.Mode, t.Stream, errBrokeResumable, ev.Next, pos[i], len(data), next,
					len(f.Content)-int(pos[i]), f.Offset))
			}
		}
	}
	return errs
}
