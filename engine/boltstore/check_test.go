package boltstore_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/engine/boltstore"
	"github.com/dsd-project/dsd/model"
)

func k(name string) model.StreamKey { return model.StreamKey{Bucket: "test", Stream: name} }

// richFile writes streams of every kind into a data file under a new directory and
// returns the engine on it: text with a snapshot and retention, JSON records from a
// producer with a snapshot by record, a fork, a deleted stream, a second bucket.
func richFile(t *testing.T) (*engine.Engine, string) {
	t.Helper()
	dir := t.TempDir()
	e, err := engine.Open(dir, engine.Options{NoSync: true, SweepInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	text := func(s string) engine.AppendRequest {
		return engine.AppendRequest{MediaType: "text/plain", Body: []byte(s)}
	}
	must(e.CreateBucket("test"))
	must(e.Create(k("s"), engine.CreateRequest{ContentType: "text/plain", MediaType: "text/plain", Body: []byte("aaa")}))
	must(e.Append(k("s"), text("bbb")))
	must(e.Append(k("s"), text("ccc")))
	must(e.PublishSnapshot(k("s"), engine.SnapshotRequest{At: engine.Position{Offset: 6}, ContentType: "application/x-state", Body: []byte("STATE@6")}))
	must(e.SetRetention(k("s"), engine.Position{Offset: 6}))
	must(e.Create(k("j"), engine.CreateRequest{ContentType: "application/json", MediaType: "application/json", Body: []byte(`[{"a":1},{"b":2}]`)}))
	for seq := uint64(0); seq < 3; seq++ {
		must(e.Append(k("j"), engine.AppendRequest{MediaType: "application/json", Body: []byte(`[{"n":1},{"n":2}]`),
			Producer: &model.Producer{ID: "p1", Seq: seq}}))
	}
	must(e.PublishSnapshot(k("j"), engine.SnapshotRequest{At: engine.Position{Record: 4, ByRecord: true}, ContentType: "application/json", Body: []byte(`{"state":4}`)}))
	at := model.Offset(6)
	must(e.Create(k("f"), engine.CreateRequest{Fork: &engine.ForkRequest{Source: k("s"), SourcePath: "/test/s", Offset: &at}}))
	must(e.Append(k("f"), text("fff")))
	must(e.Append(k("f"), text("ggg")))
	must(e.Create(k("d"), engine.CreateRequest{ContentType: "text/plain", MediaType: "text/plain", Body: []byte("doomed")}))
	must(nil, e.Delete(k("d")))
	must(e.CreateBucket("other"))
	must(e.Create(model.StreamKey{Bucket: "other", Stream: "x"}, engine.CreateRequest{ContentType: "text/plain", MediaType: "text/plain", Body: []byte("x")}))
	return e, filepath.Join(dir, boltstore.FileName)
}

// A sound data file checks clean, with its counts; a file in use is refused. Spec: D12
// (dsd check).
func TestCheckFileSound(t *testing.T) {
	e, path := richFile(t)
	if _, err := boltstore.CheckFile(path); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("check of a file in use: %v", err)
	}
	e.Close()
	rep, err := boltstore.CheckFile(path)
	if err != nil || len(rep.Problems) > 0 {
		t.Fatalf("sound file: %v %q", err, rep.Problems)
	}
	if rep.Buckets != 2 || rep.Streams != 4 {
		t.Fatalf("counts: %+v", rep)
	}
}

// Each kind of damage is found and named.
func TestCheckFileFindsDamage(t *testing.T) {
	e, src := richFile(t)
	e.Close()
	sid := func(tx *bolt.Tx, name string) uint64 {
		return boltstore.GetU64(tx.Bucket(boltstore.BktNames).Get([]byte("test/" + name)))
	}
	firstKey := func(tx *bolt.Tx, bkt []byte, name string) []byte {
		k, _ := tx.Bucket(bkt).Cursor().Seek(boltstore.SidKey(sid(tx, name)))
		return bytes.Clone(k)
	}
	for _, c := range []struct {
		name, want string
		damage     func(tx *bolt.Tx) error
	}{
		{"data gap", "data gap", func(tx *bolt.Tx) error {
			return tx.Bucket(boltstore.BktData).Delete(boltstore.PosKey(sid(tx, "s"), 3))
		}},
		{"data missing at the start", "data starts at 9", func(tx *bolt.Tx) error {
			return tx.Bucket(boltstore.BktData).Delete(boltstore.PosKey(sid(tx, "f"), 6))
		}},
		{"data short of the tail", "data ends at 9, tail 100", func(tx *bolt.Tx) error {
			m, err := boltstore.DecodeMeta(tx.Bucket(boltstore.BktMeta).Get(boltstore.SidKey(sid(tx, "s"))))
			if err != nil {
				return err
			}
			m.Tail = 100
			return tx.Bucket(boltstore.BktMeta).Put(boltstore.SidKey(m.ID), boltstore.EncodeMeta(m))
		}},
		{"record index gap", "record index gap", func(tx *bolt.Tx) error {
			return tx.Bucket(boltstore.BktRecords).Delete(boltstore.PosKey(sid(tx, "j"), 3))
		}},
		{"record off a boundary", "no message starts", func(tx *bolt.Tx) error {
			return tx.Bucket(boltstore.BktRecords).Put(boltstore.PosKey(sid(tx, "j"), 1), boltstore.U64(9))
		}},
		{"snapshot body", "does not match its digest", func(tx *bolt.Tx) error {
			key := firstKey(tx, boltstore.BktSnaps, "s")
			v := tx.Bucket(boltstore.BktSnaps).Get(key)
			return tx.Bucket(boltstore.BktSnaps).Put(key, bytes.Repeat([]byte("X"), len(v)))
		}},
		{"snapshot missing", "no stored body", func(tx *bolt.Tx) error {
			return tx.Bucket(boltstore.BktSnaps).Delete(firstKey(tx, boltstore.BktSnaps, "j"))
		}},
		{"receipt", "receipt", func(tx *bolt.Tx) error {
			return tx.Bucket(boltstore.BktRcpts).Put(firstKey(tx, boltstore.BktRcpts, "j"), append(boltstore.U64(1<<40), make([]byte, 16)...))
		}},
		{"bucket count", "counts 9 streams", func(tx *bolt.Tx) error {
			return tx.Bucket(boltstore.BktBuckets).Put([]byte("other"), []byte(`{"cms":1,"streams":9}`))
		}},
		{"dangling name", "has no meta", func(tx *bolt.Tx) error {
			return tx.Bucket(boltstore.BktNames).Put([]byte("test/ghost"), boltstore.U64(999))
		}},
		{"orphan storage", "not in the trash", func(tx *bolt.Tx) error {
			return tx.Bucket(boltstore.BktData).Put(boltstore.PosKey(777, 0), []byte{1, 'z'})
		}},
		{"fork source gone", "fork source", func(tx *bolt.Tx) error {
			return tx.Bucket(boltstore.BktMeta).Delete(boltstore.SidKey(sid(tx, "s")))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), boltstore.FileName)
			b, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(dst, b, 0o600)
			db, err := bolt.Open(dst, 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := db.Update(c.damage); err != nil {
				t.Fatal(err)
			}
			db.Close()
			rep, err := boltstore.CheckFile(dst)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(strings.Join(rep.Problems, "\n"), c.want) {
				t.Fatalf("want a problem naming %q, got %q", c.want, rep.Problems)
			}
		})
	}
}

// A backup taken while serving opens, checks clean and reads what was committed before
// it; later writes are not in it.
func TestBackupCopyOpens(t *testing.T) {
	e, _ := richFile(t)
	read := func(e *engine.Engine, name string) string {
		info, err := e.Head(k(name))
		if err != nil {
			t.Fatalf("head %s: %v", name, err)
		}
		// From the retained start: -1 is 410 once retention has advanced (D2 amended).
		from := model.OffsetSpec{Kind: model.SpecAt, At: info.RetainedFrom}
		res, err := e.Read(k(name), engine.ReadRequest{From: from, MaxBytes: 1 << 30})
		if err != nil {
			t.Fatalf("read %s: %v", name, err)
		}
		return string(res.Data)
	}
	want := map[string]string{}
	for _, name := range []string{"s", "j", "f"} {
		want[name] = read(e, name)
	}
	var buf bytes.Buffer
	var size int64
	n, err := e.Backup(&buf, func(s int64) { size = s })
	if err != nil || n != size || int64(buf.Len()) != n {
		t.Fatalf("backup: %d bytes of %d (%d buffered): %v", n, size, buf.Len(), err)
	}
	if _, err := e.Append(k("s"), engine.AppendRequest{MediaType: "text/plain", Body: []byte("after")}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, boltstore.FileName), buf.Bytes(), 0o600)
	if rep, err := boltstore.CheckFile(filepath.Join(dir, boltstore.FileName)); err != nil || len(rep.Problems) > 0 {
		t.Fatalf("check of the copy: %v %q", err, rep.Problems)
	}
	cp, err := engine.Open(dir, engine.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	for name, data := range want {
		if got := read(cp, name); got != data || data == "" {
			t.Fatalf("%s in the copy: %q, want %q", name, got, data)
		}
	}
	if b, s, err := e.Counts(); err != nil || b != 2 || s != 4 {
		t.Fatalf("counts: %d buckets, %d streams, %v", b, s, err)
	}
}
