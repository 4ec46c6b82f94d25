package fuzz

import (
	"errors"
	"os"
	"sync"
	"testing"

	"github.com/dsd-project/dsd/difftest"
)

var (
	harnessOnce sync.Once
	harness     *difftest.Harness
	harnessErr  error
	harnessDir  string // removed by TestMain
)

// sharedHarness is one engine (and its HTTP layer) per fuzzing process; each input runs
// in fresh bucket namespaces.
func sharedHarness(t testing.TB) *difftest.Harness {
	harnessOnce.Do(func() {
		dir, err := os.MkdirTemp("", "dsd-fuzz-diff-")
		if err != nil {
			harnessErr = err
			return
		}
		harnessDir = dir
		harness, harnessErr = difftest.OpenHarness(dir)
	})
	if harnessErr != nil {
		t.Fatal(harnessErr)
	}
	return harness
}

// FuzzModelVsEngine: the fuzzer's bytes choose a command script (difftest.Generate over
// a ByteSource); the model, the engine and httpd must give the same responses. Known,
// reported discrepancies (difftest.KnownIssues) end a script early instead of failing.
func FuzzModelVsEngine(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("create, append, read"))
	f.Add([]byte{20, 0, 0, 0, 50, 1, 2, 3, 4, 5, 60, 60, 60, 60, 90, 90, 90, 1, 1, 1, 30, 30})
	for seed := uint64(1); seed <= 8; seed++ {
		src := difftest.NewRandSource(seed)
		b := make([]byte, 400)
		for i := range b {
			b[i] = byte(src.Intn(256))
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		h := sharedHarness(t)
		start := difftest.DefaultStart()
		script := difftest.Generate(difftest.NewByteSource(data), difftest.GenConfig{Steps: 64, Model: h.Model, Start: start})
		err := h.Check(script, start)
		var tol *difftest.Tolerated
		if errors.As(err, &tol) {
			t.Skip(tol.Error())
		}
		if err != nil {
			t.Fatal(err)
		}
	})
}
