package engine

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/dsd-project/dsd/engine/boltstore"
	"github.com/dsd-project/dsd/engine/jsstore"
	"github.com/dsd-project/dsd/engine/jsstore/jstest"
	"github.com/dsd-project/dsd/engine/memstore"
	"github.com/dsd-project/dsd/engine/storage"
	"github.com/dsd-project/dsd/model"
)

// testEngine is an Engine on a temporary data dir (or, with DSD_TEST_BACKEND=memory, on
// an in-memory store), with a settable clock. Its cleanup closes it and runs the data
// file's consistency checks: bbolt's (the btesting habit) and dsd check's.
type testEngine struct {
	*Engine
	t   testing.TB
	dir string
	mem *memstore.Store // the memory backend's store; nil on the data file
	js  *jsstore.Store  // the jetstream backend's store
	clk *fakeClock
}

// onMemory reports whether tests run on the memory backend (the variable is the one
// engine/enginetest reads); onJetStream on jsstore (a 3-node in-process cluster).
func onMemory() bool    { return os.Getenv("DSD_TEST_BACKEND") == "memory" }
func onJetStream() bool { return os.Getenv("DSD_TEST_BACKEND") == "jetstream" }

// fileOnly skips a test about the data file itself on the other backends.
func fileOnly(t testing.TB) {
	if onMemory() || onJetStream() {
		t.Skip("about the data file; DSD_TEST_BACKEND=" + os.Getenv("DSD_TEST_BACKEND") + " runs on another store")
	}
}

// openJetStream opens a jsstore for dir on the binary's shared cluster (as
// enginetest.OpenJetStream, which this package cannot import).
func openJetStream(dir string) (*jsstore.Store, error) {
	sh, err := jstest.GetShared()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return jsstore.Open(ctx, sh.Conn, jsstore.Options{Partitions: 2, Prefix: jstest.Prefix(dir), Servers: sh.Servers})
}

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newTestEngine(t testing.TB) *testEngine {
	t.Helper()
	te := &testEngine{t: t, dir: t.TempDir(), clk: &fakeClock{t: time.Unix(1_800_000_000, 0)}}
	te.open()
	t.Cleanup(te.closeAndCheck)
	return te
}

func (te *testEngine) open() {
	te.t.Helper()
	opts := Options{NoSync: true, Clock: te.clk.now, SweepInterval: time.Hour}
	var e *Engine
	var err error
	switch {
	case onJetStream():
		if te.js, err = openJetStream(te.dir); err == nil {
			e, err = OpenBackend(te.js, opts)
		}
	case onMemory():
		if te.mem == nil {
			te.mem = memstore.New()
		} else {
			te.mem = te.mem.Reopen()
		}
		e, err = OpenBackend(te.mem, opts)
	default:
		e, err = Open(te.dir, opts)
	}
	if err != nil {
		te.t.Fatal(err)
	}
	te.Engine = e
	if _, err := e.CreateBucket("test"); err != nil {
		te.t.Fatal(err)
	}
}

// reopen closes and reopens the store: what survives is what was committed.
func (te *testEngine) reopen() {
	te.t.Helper()
	if err := te.Engine.Close(); err != nil {
		te.t.Fatal(err)
	}
	te.open()
}

func (te *testEngine) closeAndCheck() {
	if te.Engine == nil {
		return
	}
	_ = te.Engine.Close()
	if te.mem != nil || te.js != nil {
		return
	}
	st, err := boltstore.Open(te.dir, boltstore.Options{Timeout: time.Second})
	if err != nil {
		te.t.Errorf("reopen for check: %v", err)
		return
	}
	if err := st.Check(); err != nil {
		te.t.Errorf("data file consistency check: %v", err)
	}
	path := st.Path()
	st.Close()
	if rep, err := boltstore.CheckFile(path); err != nil || len(rep.Problems) > 0 {
		te.t.Errorf("dsd check: %v %q", err, rep.Problems)
	}
}

func key(name string) model.StreamKey { return model.StreamKey{Bucket: "test", Stream: name} }

func (te *testEngine) mustCreate(name, ct string, body string) CreateResult {
	te.t.Helper()
	mt := ""
	if ct != "" {
		mt, _ = model.MediaType(ct)
	}
	res, err := te.Create(key(name), CreateRequest{ContentType: ct, MediaType: mt, Body: []byte(body)})
	if err != nil {
		te.t.Fatalf("create %s: %v", name, err)
	}
	return res
}

func (te *testEngine) mustAppend(name, ct, body string) AppendResult {
	te.t.Helper()
	mt, _ := model.MediaType(ct)
	res, err := te.Append(key(name), AppendRequest{MediaType: mt, Body: []byte(body)})
	if err != nil {
		te.t.Fatalf("append %s: %v", name, err)
	}
	return res
}

func (te *testEngine) readAll(name string) ReadResult {
	te.t.Helper()
	res, err := te.Read(key(name), ReadRequest{From: model.OffsetSpec{Kind: model.SpecStart}, MaxBytes: 1 << 30})
	if err != nil {
		te.t.Fatalf("read %s: %v", name, err)
	}
	return res
}

// setFault makes every commit and probe of the store fail with err (nil: none fail).
func (te *testEngine) setFault(err error) {
	if te.mem != nil {
		var f memstore.Fault
		if err != nil {
			f = func(string, *storage.Change) error { return err }
		}
		te.mem.SetFault(f)
		return
	}
	if te.js != nil {
		var f func() error
		if err != nil {
			f = func() error { return err }
		}
		te.js.SetFault(f)
		return
	}
	var f func() error
	if err != nil {
		f = func() error { return err }
	}
	te.st.(*boltstore.Store).SetFault(f)
}
