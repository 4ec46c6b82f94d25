package difftest

import (
	"errors"
	"flag"
	"testing"
	"time"

	"github.com/dsd-project/dsd/model"
)

var (
	flagScripts = flag.Int("diff.scripts", 150, "random scripts per differential test")
	flagSteps   = flag.Int("diff.steps", 60, "steps per random script")
	flagSeed    = flag.Uint64("diff.seed", 0, "first seed (0: derived from the time; printed)")
)

// Random command scripts give the same responses from the model, from the engine and
// through httpd: status, error code, the protocol headers and read bodies.
func TestModelVsEngineAndHTTP(t *testing.T) {
	h, err := OpenHarness(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	scripts := *flagScripts
	if testing.Short() {
		scripts = min(scripts, 50)
	}
	seed := *flagSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seeds %d..%d (replay one with -diff.seed=N -diff.scripts=1)", seed, seed+uint64(scripts)-1)
	steps, tolerated := 0, map[string]int{}
	for i := 0; i < scripts; i++ {
		start := DefaultStart()
		script := Generate(NewRandSource(seed+uint64(i)), GenConfig{Steps: *flagSteps, Model: h.Model, Start: start})
		steps += len(script)
		err := h.Check(script, start)
		var tol *Tolerated
		if errors.As(err, &tol) {
			tolerated[tol.Issue.ID]++
			continue
		}
		if err != nil {
			t.Fatalf("seed %d: %v", seed+uint64(i), err)
		}
	}
	t.Logf("%d scripts, %d steps, each on the engine and through httpd", scripts, steps)
	for id, n := range tolerated {
		t.Logf("%d scripts cut short by known issue %s (reported; see known.go)", n, id)
	}
}

// The harness itself must catch a difference: a target that lies about one header is
// reported at the step where it lies.
func TestHarnessReportsAMismatch(t *testing.T) {
	h, err := OpenHarness(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	k := model.StreamKey{Bucket: "bkt0", Stream: "s"}
	script := Script{model.CreateBucket{Bucket: "bkt0"}, model.CreateStream{Stream: k},
		model.HeadStream{Stream: k}, model.AppendStream{Stream: k, Closed: model.Str("true")},
		model.HeadStream{Stream: k}}
	liar := lyingTarget{EngineTarget{E: h.Engine, Now: h.Clock.Now}}
	err = Run("liar", script, liar, h.Clock, h.Model, "liar-")
	m, ok := err.(*Mismatch)
	if !ok {
		t.Fatalf("a target that drops Stream-Closed went unnoticed: %v", err)
	}
	if m.Step != 3 || m.Got.Header[hClosed] != "" || m.WantO.Header[hClosed] != "true" {
		t.Fatalf("mismatch reported for the wrong reason: %v", m)
	}
}

// lyingTarget drops every Stream-Closed header.
type lyingTarget struct{ Target }

func (l lyingTarget) Do(c model.Command) Observation {
	o := l.Target.Do(c)
	delete(o.Header, hClosed)
	return o
}
