package difftest

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/dsd-project/dsd/model"
)

// Tick advances a script's clock by D; it is not a request.
type Tick struct{ D time.Duration }

// Name implements model.Command (a Tick is a script step, never applied).
func (t Tick) Name() string { return "tick " + t.D.String() }

// Script is a sequence of commands and ticks.
type Script []model.Command

// String renders the script one step per line, numbered.
func (s Script) String() string {
	var b strings.Builder
	for i, c := range s {
		fmt.Fprintf(&b, "%4d  %s\n", i, c.Name())
	}
	return b.String()
}

// Clock is a settable clock shared by a script runner and the engine under test.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock at t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Namespace returns cmd with every bucket id prefixed by ns, so that scripts sharing one
// engine never see each other's buckets. Prefixing keeps invalid ids invalid when ns is
// made of valid bucket-id characters (the generator's invalid ids have upper case or
// are too short to be fixed by a prefix of one character).
func Namespace(cmd model.Command, ns string) model.Command {
	key := func(k model.StreamKey) model.StreamKey { k.Bucket = ns + k.Bucket; return k }
	switch c := cmd.(type) {
	case model.CreateBucket:
		c.Bucket = ns + c.Bucket
		return c
	case model.GetBucket:
		c.Bucket = ns + c.Bucket
		return c
	case model.DeleteBucket:
		c.Bucket = ns + c.Bucket
		return c
	case model.CreateStream:
		c.Stream = key(c.Stream)
		if f := c.ForkedFrom; f != nil && strings.HasPrefix(*f, "/") && !strings.HasPrefix(*f, "//") {
			c.ForkedFrom = model.Str("/" + ns + (*f)[1:])
		}
		return c
	case model.AppendStream:
		c.Stream = key(c.Stream)
		return c
	case model.ReadStream:
		c.Stream = key(c.Stream)
		return c
	case model.HeadStream:
		c.Stream = key(c.Stream)
		return c
	case model.DeleteStream:
		c.Stream = key(c.Stream)
		return c
	case model.GetAttrs:
		c.Stream = key(c.Stream)
		return c
	case model.PutAttrs:
		c.Stream = key(c.Stream)
		return c
	case model.AppendBatch:
		c.Stream = key(c.Stream)
		return c
	case model.PublishSnapshot:
		c.Stream = key(c.Stream)
		return c
	case model.GetSnapshot:
		c.Stream = key(c.Stream)
		return c
	case model.DeleteSnapshot:
		c.Stream = key(c.Stream)
		return c
	case model.SetRetention:
		c.Stream = key(c.Stream)
		return c
	case model.Bootstrap:
		c.Stream = key(c.Stream)
		return c
	}
	panic(fmt.Sprintf("difftest: Namespace does not know %T", cmd))
}

// Mismatch is a differential failure: the first step where a target's response
// differs from the model's.
type Mismatch struct {
	Target string
	Step   int
	Script Script // up to and including the failing step, namespaced
	Want   model.Result
	WantO  Observation
	Got    Observation
	Diff   string
}

func (m *Mismatch) Error() string {
	return fmt.Sprintf("%s differs from the model at step %d: %s\n  command: %s\n  model:   %s\n  %s: %s\nscript:\n%s",
		m.Target, m.Step, m.Diff, m.Script[m.Step].Name(), m.WantO, m.Target, m.Got, m.Script)
}

// Run plays script on a fresh model state (configured with cfg) and on target, with
// clock as the time of both, bucket ids namespaced by ns. It returns the first
// *Mismatch, or nil when every response agrees. A difference explained by a
// KnownIssue ends the run early with a *Tolerated instead.
func Run(name string, script Script, target Target, clock *Clock, cfg model.Config, ns string) error {
	return run(name, script, target, clock, cfg, ns, runOpts{issues: KnownIssues, sweepFirst: hasForks(script)})
}

// runOpts tune run: the known issues that may explain a difference, and whether the
// expiry a tick brings is swept before the next request (see settleExpiry).
type runOpts struct {
	issues     []KnownIssue
	sweepFirst bool
}

func run(name string, script Script, target Target, clock *Clock, cfg model.Config, ns string, opts runOpts) error {
	s := model.NewState(cfg)
	var done Script
	settle, forks := false, opts.sweepFirst
	issues := opts.issues
	for i, step := range script {
		if t, ok := step.(Tick); ok {
			clock.Advance(t.D)
			done = append(done, t)
			settle = true
			continue
		}
		cmd := Namespace(step, ns)
		done = append(done, cmd)
		if settle && forks {
			settleExpiry(target, ns)
			settle = false
		}
		var res model.Result
		s, res = s.Apply(cmd, clock.Now())
		want, got := FromResult(res), target.Do(cmd)
		if settle {
			settleExpiry(target, ns)
			settle = false
		}
		if got.Code == CodeNoBody && want.Code != "" {
			want.Code = CodeNoBody
		}
		if d := want.Diff(got); d != "" {
			if k, ok := known(issues, cmd, want, got); ok {
				return &Tolerated{Issue: k, Step: i, Want: want, Got: got}
			}
			return &Mismatch{Target: name, Step: i, Script: done, Want: res, WantO: want, Got: got, Diff: d}
		}
	}
	return nil
}

// settleExpiry makes a target apply the expiry that time has brought, as the model does
// at once: dsd expires lazily, on access and in a background sweep, and GET
// /{bucket} expires the bucket's streams there and then. Run calls it after the first
// request that follows a clock tick, so that request still meets the unswept state
// (lazy expiry must look eager). In scripts with forks it calls it before that request:
// an expired fork releases its source when it is swept, and B-4.2-11 lets that happen
// asynchronously, which no deterministic model can mirror; the first request after a
// forked stream expires is checked by TestKI7ExpiredForkSourceIsSoftDeleted instead.
// Forks and their sources share a bucket, so the sweep settles their references too.
func settleExpiry(target Target, ns string) {
	for _, b := range buckets {
		if model.ValidBucketID(b) {
			target.Do(model.GetBucket{Bucket: ns + b})
		}
	}
}

// hasForks reports whether script makes a fork request.
func hasForks(script Script) bool {
	for _, c := range script {
		if cs, ok := c.(model.CreateStream); ok && cs.ForkedFrom != nil {
			return true
		}
	}
	return false
}
