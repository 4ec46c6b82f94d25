package engine

import (
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/dsd-project/dsd/model"
)

// testEngine is an Engine on a temporary data dir, with a settable clock. Its cleanup
// closes it and runs bbolt's consistency check (the btesting habit) and dsd check.
type testEngine struct {
	*Engine
	t   testing.TB
	dir string
	clk *fakeClock
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
	e, err := Open(te.dir, Options{NoSync: true, Clock: te.clk.now, SweepInterval: time.Hour})
	if err != nil {
		te.t.Fatal(err)
	}
	te.Engine = e
	if _, err := e.CreateBucket("test"); err != nil {
		te.t.Fatal(err)
	}
}

// reopen closes and reopens the data file: what survives is what was committed.
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
	if rep, err := CheckFile(te.dir + "/dsd.db"); err != nil || len(rep.Problems) > 0 {
		te.t.Errorf("dsd check: %v %q", err, rep.Problems)
	}
	db, err := bolt.Open(te.dir+"/dsd.db", 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		te.t.Errorf("reopen for check: %v", err)
		return
	}
	defer db.Close()
	if err := db.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			return err
		}
		return nil
	}); err != nil {
		te.t.Errorf("bbolt consistency check: %v", err)
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
