package jsstore

import (
	"errors"
	"testing"

	"github.com/dsd-project/dsd/engine/storage"
)

func kvPutOf(space, key, val string) storage.KVPut {
	return storage.KVPut{Space: space, Key: []byte(key), Value: []byte(val)}
}

func kvWant(t *testing.T, st *Store, space, key, want string) {
	t.Helper()
	v, err := st.KV(space, []byte(key))
	if err != nil {
		t.Fatal(err)
	}
	if want == "" && v != nil || want != "" && string(v) != want {
		t.Fatalf("%s %q = %q, want %q", space, key, v, want)
	}
}

// A change's subscription records commit in one message with the rest of it: in its
// incarnation's frame (a wake event's append), else in the partition's journal. A store
// that stops after the commit point, before materializing the records on their subjects,
// loses none of them: opening the partition folds the frames and the journal in, newest
// first, and the next commit materializes them. Spec: DESIGN.md D10, D11.
func testKVCrashWindow(t *testing.T, e *env) {
	o := e.opts()
	o.Partitions = 1
	st := e.open(t, o)
	defer st.Close()
	st.noSettle = true
	sp, ln := storage.SpaceSubs, storage.SpaceLinks
	create := createChange(1, "s", "a")
	create.Subs = []storage.KVPut{kvPutOf(sp, "bk\x00w", "framed")}
	errs := st.Commit([]storage.Change{create,
		{Subs: []storage.KVPut{kvPutOf(sp, "bk\x00x", "1"), kvPutOf(ln, "bk\x00x\x00p", "l1")}},
		{SID: 1, Messages: []storage.Message{unit(1, "b")}, Subs: []storage.KVPut{kvPutOf(sp, "bk\x00x", "2")}},
		{Subs: []storage.KVPut{{Space: ln, Key: []byte("bk\x00x\x00"), Prefix: true}}},
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("change %d: %v", i, err)
		}
	}
	in := st.parts[0].incs[1]
	f, err := st.frameAt(t.Context(), 0, in.Index[0].Seq)
	if err != nil || len(f.head.Parts) == 0 || len(f.head.Parts[0].KV) != 1 {
		t.Fatalf("the create's record is not in its frame: %+v %v", f, err)
	}
	if n := st.subjectCount(t, st.journalSubj(0)); n != 1 {
		t.Fatalf("journal messages %d, want 1", n)
	}
	if n := st.subjectCount(t, st.kvSubj(0, sp, "bk\x00x")); n != 0 {
		t.Fatalf("materialized with noSettle: %d", n)
	}
	re := e.open(t, o)
	kvWant(t, re, sp, "bk\x00w", "framed")
	kvWant(t, re, sp, "bk\x00x", "2") // the later change of the group, journaled after the frames
	kvWant(t, re, ln, "bk\x00x\x00p", "")
	mustCommit(t, re, storage.Change{Subs: []storage.KVPut{kvPutOf(sp, "bk\x00y", "3")}})
	re.Close()
	if n := st.subjectCount(t, st.kvSubj(0, sp, "bk\x00w")); n != 1 {
		t.Fatalf("the framed record is not materialized: %d", n)
	}
	if n := st.subjectCount(t, st.journalSubj(0)); n != 1 {
		t.Fatalf("journal messages %d, want 1 (rolled up)", n)
	}
	last := e.open(t, o)
	defer last.Close()
	var got []string
	_ = last.KVScan(sp, []byte("bk\x00"), func(k, v []byte) bool {
		got = append(got, string(k)+"="+string(v))
		return true
	})
	if want := "bk\x00w=framed bk\x00x=2 bk\x00y=3"; joinSp(got) != want {
		t.Fatalf("after materializing: %q, want %q", joinSp(got), want)
	}
}

func joinSp(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}

// A deposed writer's subscription records conflict (compare-and-set on the journal and
// on each key's subject) and are not applied; its state is reloaded. Spec: D11.
func testKVConflict(t *testing.T, e *env) {
	o := e.opts()
	o.Partitions = 1
	old := e.open(t, o)
	defer old.Close()
	mustCommit(t, old, storage.Change{Subs: []storage.KVPut{kvPutOf(storage.SpaceSubs, "bk\x00a", "old")}})
	cur := e.open(t, o)
	defer cur.Close()
	mustCommit(t, cur, storage.Change{Subs: []storage.KVPut{kvPutOf(storage.SpaceSubs, "bk\x00a", "new")}})
	errs := old.Commit([]storage.Change{{Subs: []storage.KVPut{kvPutOf(storage.SpaceSubs, "bk\x00a", "stale")}}})
	if !errors.Is(errs[0], storage.ErrConflict) {
		t.Fatalf("a deposed writer's record: %v, want ErrConflict", errs[0])
	}
	kvWant(t, old, storage.SpaceSubs, "bk\x00a", "new")
	re := e.open(t, o)
	defer re.Close()
	kvWant(t, re, storage.SpaceSubs, "bk\x00a", "new")
}
