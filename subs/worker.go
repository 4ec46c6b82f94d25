package subs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/dsd-project/dsd/model"
)

// Defaults of Options.
const (
	defaultTimeout     = 10 * time.Second
	defaultConcurrency = 8
	defaultTokenTTL    = time.Hour
	// storeRetry is how soon a step is retried after a storage error.
	storeRetry = 5 * time.Second
	// parallelSteps bounds the steps (Store reads and commits) running at once, so that
	// commits of different subscriptions can share an fsync (group commit).
	parallelSteps = 4
)

// Worker is the delivery worker; see the API list in api.go.
type Worker struct {
	opts   Options
	store  Store
	clock  Clock
	jitter func() float64
	rnd    io.Reader // ids and keys
	guard  *guard
	client *http.Client
	sem    chan struct{}
	log    *slog.Logger
	sched  *schedule

	keysMu sync.RWMutex
	keys   Keys
	sign   signer

	mu       sync.Mutex
	subs     map[string]map[string]*sub // bucket → id → mirror
	stopping bool

	runCtx    context.Context // cancelled when Stop gives up waiting
	cancelRun context.CancelFunc
	loopDone  chan struct{}
	stepSem   chan struct{}
	steps     sync.WaitGroup
	attempts  sync.WaitGroup
}

// sub is the worker's mirror of one subscription. mu orders every decision about it.
type sub struct {
	mu       sync.Mutex
	s        Subscription     // the configuration and incarnation as last read from Store
	mach     model.SubMachine // the model machine: s.State, the links, the volatile lease
	loaded   bool
	inFlight bool       // a webhook attempt is running (one per subscription at a time)
	glob     model.Glob // compiled s.Pattern (set with s, under w.mu)
}

// New returns a worker for opts; Start begins delivery. Errors: a nil Store.
func New(opts Options) (*Worker, error) {
	if opts.Store == nil {
		return nil, errors.New("subs: Options.Store is required")
	}
	if opts.Clock == nil {
		opts.Clock = systemClock{}
	}
	if opts.Jitter == nil {
		opts.Jitter = rand.Float64
	}
	if opts.Timeout <= 0 {
		opts.Timeout = defaultTimeout
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = defaultConcurrency
	}
	if opts.TokenTTL <= 0 {
		opts.TokenTTL = defaultTokenTTL
	}
	if opts.Resolve == nil {
		opts.Resolve = defaultResolve
	}
	g := &guard{resolve: opts.Resolve, onConnect: opts.onConnect}
	ctx, cancel := context.WithCancel(context.Background())
	return &Worker{
		opts: opts, store: opts.Store, clock: opts.Clock, jitter: opts.Jitter, rnd: cryptoRand,
		guard: g, client: newClient(g, opts.Timeout), sem: make(chan struct{}, opts.Concurrency),
		log: slog.Default().With("component", "subs"), sched: newSchedule(),
		subs: map[string]map[string]*sub{}, runCtx: ctx, cancelRun: cancel, stepSem: make(chan struct{}, parallelSteps),
	}, nil
}

// Start loads the keys (generating and saving them on first start), loads every live
// subscription and schedules a step for each at once: pending work, outstanding wakes and
// their persisted next attempt times are derived from the Store, so delivery resumes after
// a crash. Leases that were running restart in full (design 5.3). Errors: storage errors.
func (w *Worker) Start(ctx context.Context) error {
	if err := w.loadKeys(ctx); err != nil {
		return err
	}
	all, err := w.store.Subscriptions(ctx)
	if err != nil {
		return fmt.Errorf("subs: loading subscriptions: %w", err)
	}
	now := w.clock.Now()
	w.mu.Lock()
	for _, s := range all {
		m := &sub{s: s, loaded: true, mach: machineOf(s, nil).Restart(now.UnixMilli())}
		w.put(m)
		w.sched.at(s.Key, now)
	}
	w.loopDone = make(chan struct{})
	w.mu.Unlock()
	go w.loop()
	return nil
}

// Stop stops issuing wakes and starting attempts, and waits for attempts in flight until
// ctx ends (then cancels them; a cancelled attempt records nothing and is retried after the
// next Start). The route functions keep working. A Worker is started and stopped once.
func (w *Worker) Stop(ctx context.Context) error {
	w.mu.Lock()
	if w.stopping {
		w.mu.Unlock()
		return nil
	}
	w.stopping = true
	done := w.loopDone
	w.mu.Unlock()
	w.sched.at(Key{}, time.Time{}) // kick the loop so it sees stopping
	if done != nil {
		<-done
	}
	w.steps.Wait()
	idle := make(chan struct{})
	go func() { w.attempts.Wait(); close(idle) }()
	var err error
	select {
	case <-idle:
	case <-ctx.Done():
		err = ctx.Err()
	}
	w.cancelRun()
	<-idle
	return err
}

func (w *Worker) isStopping() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stopping
}

// StreamChanged tells the worker that a stream's tail moved, that it was created with data,
// or that it was deleted (call after the commit was published). It never blocks.
func (w *Worker) StreamChanged(bucket, path string) {
	now := w.clock.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	bs := w.subs[bucket]
	if len(bs) == 0 {
		return
	}
	segs := model.SplitPath(path)
	for _, m := range bs {
		if routes(m, path, segs) {
			w.sched.at(m.s.Key, now)
		}
	}
}

// routes reports whether path (split into segs) may be linked to m: its pattern matches or
// it is listed. It reads the config without m.mu: config fields change only under w.mu.
func routes(m *sub, path string, segs []string) bool {
	if m.glob != nil && m.glob.Match(segs) {
		return true
	}
	for _, p := range m.s.Streams {
		if p == path {
			return true
		}
	}
	return false
}

// SubscriptionChanged tells the worker that a subscription was created, re-created,
// deleted or had links added or removed (call after the commit). It never blocks.
func (w *Worker) SubscriptionChanged(key Key) {
	w.sched.at(key, w.clock.Now())
}

// loop runs due steps until Stop.
func (w *Worker) loop() {
	defer close(w.loopDone)
	for {
		if w.isStopping() {
			return
		}
		keys, next := w.sched.popDue(w.clock.Now())
		for _, k := range keys {
			if k != (Key{}) {
				w.stepSem <- struct{}{}
				w.steps.Add(1)
				go func() {
					defer func() { <-w.stepSem; w.steps.Done(); w.sched.end() }()
					w.step(k)
				}()
			}
		}
		if len(keys) > 0 {
			continue
		}
		var timer <-chan time.Time
		if !next.IsZero() {
			timer = w.clock.At(next)
		}
		select {
		case <-w.sched.kick:
		case <-timer:
		case <-w.runCtx.Done():
			return
		}
	}
}

// mirror returns the mirror of k, creating an unloaded one.
func (w *Worker) mirror(k Key) *sub {
	w.mu.Lock()
	defer w.mu.Unlock()
	m := w.subs[k.Bucket][k.ID]
	if m == nil {
		m = &sub{s: Subscription{Key: k}}
		w.put(m)
	}
	return m
}

// put indexes m (w.mu held).
func (w *Worker) put(m *sub) {
	k := m.s.Key
	m.glob = model.CompileGlob(m.s.Pattern)
	if w.subs[k.Bucket] == nil {
		w.subs[k.Bucket] = map[string]*sub{}
	}
	w.subs[k.Bucket][k.ID] = m
}

// current reports whether m is the indexed mirror of its key.
func (w *Worker) current(m *sub) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.subs[m.s.Key.Bucket][m.s.Key.ID] == m
}

// refresh reloads m's subscription and links from the Store (m.mu held) and rebuilds its
// machine. The Store is authoritative; only the volatile lease deadline of the same wake
// survives (model.SubMachine.KeepLease) while the incarnation is unchanged. Errors:
// ErrNotFound (the mirror is dropped), storage errors.
func (w *Worker) refresh(ctx context.Context, m *sub) error {
	s, err := w.store.Subscription(ctx, m.s.Key)
	var links []Link
	if err == nil {
		links, err = w.store.Links(ctx, m.s.Key)
	}
	if errors.Is(err, ErrNotFound) {
		w.drop(m)
		return ErrNotFound
	}
	if err != nil {
		return err
	}
	mach := machineOf(s, links)
	if m.loaded && s.Incarnation == m.s.Incarnation {
		mach = mach.KeepLease(m.mach)
	}
	w.mu.Lock()
	m.s, m.glob = s, model.CompileGlob(s.Pattern)
	w.mu.Unlock()
	m.mach, m.loaded = mach, true
	return nil
}

// drop removes m from the index (its subscription is gone).
func (w *Worker) drop(m *sub) {
	w.mu.Lock()
	k := m.s.Key
	if w.subs[k.Bucket][k.ID] == m {
		delete(w.subs[k.Bucket], k.ID)
		if len(w.subs[k.Bucket]) == 0 {
			delete(w.subs, k.Bucket)
		}
	}
	w.mu.Unlock()
	m.loaded = false
}

// acquire locks the mirror of k and refreshes it; the caller unlocks m.mu.
func (w *Worker) acquire(ctx context.Context, k Key) (*sub, error) {
	for {
		m := w.mirror(k)
		m.mu.Lock()
		if !w.current(m) { // dropped while we waited: take the new mirror
			m.mu.Unlock()
			continue
		}
		if err := w.refresh(ctx, m); err != nil {
			m.mu.Unlock()
			return nil, err
		}
		return m, nil
	}
}
