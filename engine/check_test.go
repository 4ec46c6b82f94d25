package engine

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/dsd-project/dsd/model"
)

// richState writes streams of every kind: text with a snapshot and retention, JSON
// records from a producer, a fork, a deleted stream, a second bucket.
func richState(t *testing.T, te *testEngine) {
	t.Helper()
	te.mustCreate("s", "text/plain", "aaa")
	te.mustAppend("s", "text/plain", "bbb")
	te.mustAppend("s", "text/plain", "ccc")
	if _, err := publish(te, "s", 6, "application/x-state", "STATE@6"); err != nil {
		t.Fatal(err)
	}
	if _, err := te.SetRetention(key("s"), Position{Offset: 6}); err != nil {
		t.Fatal(err)
	}
	te.mustCreate("j", "application/json", `[{"a":1},{"b":2}]`)
	for seq := uint64(0); seq < 3; seq++ {
		p := &model.Producer{ID: "p1", Epoch: 0, Seq: seq}
		if _, err := te.Append(key("j"), AppendRequest{MediaType: "application/json", Body: []byte(`[{"n":1},{"n":2}]`), Producer: p}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := te.PublishSnapshot(key("j"), SnapshotRequest{At: Position{Record: 4, ByRecord: true}, ContentType: "application/json", Body: []byte(`{"state":4}`)}); err != nil {
		t.Fatal(err)
	}
	at := off(6)
	if _, err := te.Create(key("f"), forkReq("s", &at, 0)); err != nil {
		t.Fatal(err)
	}
	te.mustAppend("f", "text/plain", "fff")
	te.mustAppend("f", "text/plain", "ggg")
	te.mustCreate("d", "text/plain", "doomed")
	if err := te.Delete(key("d")); err != nil {
		t.Fatal(err)
	}
	if _, err := te.CreateBucket("other"); err != nil {
		t.Fatal(err)
	}
	if _, err := te.Create(model.StreamKey{Bucket: "other", Stream: "x"}, CreateRequest{ContentType: "text/plain", MediaType: "text/plain", Body: []byte("x")}); err != nil {
		t.Fatal(err)
	}
}

// A sound data file checks clean, with its counts. Spec: D12 (dsd check).
func TestCheckFileSound(t *testing.T) {
	te := newTestEngine(t)
	richState(t, te)
	te.Close()
	rep, err := CheckFile(filepath.Join(te.dir, "dsd.db"))
	if err != nil || len(rep.Problems) > 0 {
		t.Fatalf("sound file: %v %q", err, rep.Problems)
	}
	if rep.Buckets != 2 || rep.Streams != 4 {
		t.Fatalf("counts: %+v", rep)
	}
}

// Each kind of damage is found and named.
func TestCheckFileFindsDamage(t *testing.T) {
	te := newTestEngine(t)
	richState(t, te)
	te.Close()
	src := filepath.Join(te.dir, "dsd.db")
	sid := func(tx *bolt.Tx, name string) uint64 { return getU64(tx.Bucket(bktNames).Get([]byte("test/" + name))) }
	for _, c := range []struct {
		name, want string
		damage     func(tx *bolt.Tx) error
	}{
		{"data gap", "data gap", func(tx *bolt.Tx) error { return tx.Bucket(bktData).Delete(posKey(sid(tx, "s"), 3)) }},
		{"data missing at the start", "data starts at 9", func(tx *bolt.Tx) error { return tx.Bucket(bktData).Delete(posKey(sid(tx, "f"), 6)) }},
		{"data short of the tail", "data ends at 9, tail 100", func(tx *bolt.Tx) error {
			m, err := decodeMeta(tx.Bucket(bktMeta).Get(sidKey(sid(tx, "s"))))
			if err != nil {
				return err
			}
			m.Tail = 100
			return tx.Bucket(bktMeta).Put(sidKey(m.ID), encodeMeta(m))
		}},
		{"record index gap", "record index gap", func(tx *bolt.Tx) error { return tx.Bucket(bktRecords).Delete(posKey(sid(tx, "j"), 3)) }},
		{"record off a boundary", "no message starts", func(tx *bolt.Tx) error {
			return tx.Bucket(bktRecords).Put(posKey(sid(tx, "j"), 1), u64(9))
		}},
		{"snapshot body", "does not match its digest", func(tx *bolt.Tx) error {
			c := tx.Bucket(bktSnaps).Cursor()
			k, v := c.Seek(sidKey(sid(tx, "s")))
			return tx.Bucket(bktSnaps).Put(bytes.Clone(k), bytes.Repeat([]byte("X"), len(v)))
		}},
		{"snapshot missing", "no stored body", func(tx *bolt.Tx) error {
			c := tx.Bucket(bktSnaps).Cursor()
			k, _ := c.Seek(sidKey(sid(tx, "j")))
			return tx.Bucket(bktSnaps).Delete(bytes.Clone(k))
		}},
		{"receipt", "receipt", func(tx *bolt.Tx) error {
			c := tx.Bucket(bktRcpts).Cursor()
			k, _ := c.Seek(sidKey(sid(tx, "j")))
			return tx.Bucket(bktRcpts).Put(bytes.Clone(k), append(u64(1<<40), make([]byte, 16)...))
		}},
		{"bucket count", "counts 9 streams", func(tx *bolt.Tx) error {
			return tx.Bucket(bktBuckets).Put([]byte("other"), []byte(`{"cms":1,"streams":9}`))
		}},
		{"dangling name", "has no meta", func(tx *bolt.Tx) error { return tx.Bucket(bktNames).Put([]byte("test/ghost"), u64(999)) }},
		{"orphan storage", "not in the trash", func(tx *bolt.Tx) error { return tx.Bucket(bktData).Put(posKey(777, 0), []byte{1, 'z'}) }},
		{"fork source gone", "fork source", func(tx *bolt.Tx) error { return tx.Bucket(bktMeta).Delete(sidKey(sid(tx, "s"))) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "dsd.db")
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
			rep, err := CheckFile(dst)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(strings.Join(rep.Problems, "\n"), c.want) {
				t.Fatalf("want a problem naming %q, got %q", c.want, rep.Problems)
			}
		})
	}
}

// Backup while serving is a file that opens with everything committed before it.
func TestBackupCopyOpens(t *testing.T) {
	te := newTestEngine(t)
	richState(t, te)
	want := map[string]string{}
	for _, name := range []string{"s", "j", "f"} {
		want[name] = string(te.readAll(name).Data)
	}
	var buf bytes.Buffer
	var size int64
	n, err := te.Backup(&buf, func(s int64) { size = s })
	if err != nil || n != size || int64(buf.Len()) != n {
		t.Fatalf("backup: %d bytes of %d (%d buffered): %v", n, size, buf.Len(), err)
	}
	te.mustAppend("s", "text/plain", "after") // not in the copy
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "dsd.db"), buf.Bytes(), 0o600)
	if rep, err := CheckFile(filepath.Join(dir, "dsd.db")); err != nil || len(rep.Problems) > 0 {
		t.Fatalf("check of the copy: %v %q", err, rep.Problems)
	}
	cp, err := Open(dir, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	for name, data := range want {
		res, err := cp.Read(key(name), ReadRequest{From: model.OffsetSpec{Kind: model.SpecStart}, MaxBytes: 1 << 30})
		if err != nil || string(res.Data) != data || data == "" {
			t.Fatalf("%s in the copy: %q %v, want %q", name, res.Data, err, data)
		}
	}
}
