package boltstore_test

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dsd-project/dsd/engine/boltstore"
	"github.com/dsd-project/dsd/engine/storage"
)

// never keeps every group in the log: nothing is checkpointed before Close.
var never = boltstore.Options{NoSync: true, CheckpointBytes: -1, CheckpointInterval: -1, Warn: func(string, ...any) {}}

// logStream creates stream "bk/s" (sid 1, text/plain) in st.
func logStream(t testing.TB, st *boltstore.Store) {
	t.Helper()
	m := &storage.Meta{ID: 1, Bucket: "bk", Stream: "s", ContentType: "text/plain", MediaType: "text/plain"}
	bk := storage.Change{Bucket: &storage.BucketPut{ID: "bk", Record: &storage.BucketRecord{CreatedMs: 1}}}
	ch := storage.Change{SID: 1, Bind: &storage.Binding{Name: "bk/s", Bucket: "bk", SID: 1}, Meta: m}
	mustCommit(t, st, bk, ch)
}

func mustCommit(t testing.TB, st *boltstore.Store, group ...storage.Change) {
	t.Helper()
	for _, err := range st.Commit(group) {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// unit is the i-th append's message: 10 bytes.
func unit(i int) string { return fmt.Sprintf("m%08d\n", i) }

// appendUnit commits append i at tail and returns the new tail.
func appendUnit(t testing.TB, st *boltstore.Store, i int, tail uint64) uint64 {
	val := append([]byte{storage.FlagUnitEnd}, unit(i)...)
	mustCommit(t, st, storage.Change{SID: 1, Messages: []storage.Message{{Off: tail, Val: val}}})
	return tail + uint64(len(val)-1)
}

// contents returns the stream's tail and data.
func contents(t *testing.T, st *boltstore.Store) (uint64, string) {
	t.Helper()
	m, err := st.Stream("bk/s")
	if err != nil || m == nil {
		t.Fatalf("stream: %v %v", m, err)
	}
	var b strings.Builder
	segs := []storage.Segment{{SID: 1, To: m.Tail}}
	if m.Tail > 0 {
		if err := st.Messages(segs, 0, m.Tail, storage.Limits{Bytes: 1 << 30}, func(_ uint64, v []byte) { b.Write(v[1:]) }); err != nil {
			t.Fatal(err)
		}
	}
	return m.Tail, b.String()
}

func prefix(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(unit(i))
	}
	return b.String()
}

// dirImage is a directory's regular files held in memory, each without its trailing
// zeros (bbolt grows its file by truncation in steps of 16 MiB) and with its size.
type dirImage map[string]struct {
	data []byte
	size int64
}

func readDir(t *testing.T, src string) dirImage {
	t.Helper()
	img := dirImage{}
	err := filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		n := len(b)
		for n > 0 && b[n-1] == 0 {
			n--
		}
		rel, _ := filepath.Rel(src, p)
		img[rel] = struct {
			data []byte
			size int64
		}{b[:n], fi.Size()}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// write lays the image out under dst (sparse: the trailing zeros are a truncation).
func (img dirImage) write(t *testing.T, dst string) {
	t.Helper()
	for rel, f := range img {
		p := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(p, f.size); err != nil {
			t.Fatal(err)
		}
	}
}

func copyDir(t *testing.T, src, dst string) { readDir(t, src).write(t, dst) }

// openWithAppends opens a store with opts on a new directory, creates the stream and
// commits n appends: it returns the store, its directory and the stream's tail.
func openWithAppends(t *testing.T, opts boltstore.Options, n int) (st *boltstore.Store, dir string, tail uint64) {
	t.Helper()
	dir = t.TempDir()
	st, err := boltstore.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	logStream(t, st)
	for i := range n {
		tail = appendUnit(t, st, i, tail)
	}
	return st, dir, tail
}

// crashCopy copies the open store st's directory live (no write transaction runs: the
// copy is the state a crash leaves), closes st, and returns the copy and its log's only
// segment.
func crashCopy(t *testing.T, st *boltstore.Store, live string) (dir, seg string) {
	t.Helper()
	dir = t.TempDir()
	copyDir(t, live, dir)
	st.Close()
	segs, _ := filepath.Glob(filepath.Join(dir, boltstore.LogDir, "*.seg"))
	if len(segs) != 1 {
		t.Fatalf("segments %v", segs)
	}
	return dir, segs[0]
}

// crashedDir leaves in a directory a data file holding only the create and a log of n
// appends (the state a crash leaves before any checkpoint), and returns the directory
// and the log's only segment.
func crashedDir(t *testing.T, n int) (dir, seg string) {
	st, live, _ := openWithAppends(t, never, n)
	return crashCopy(t, st, live)
}

// A log cut at any byte (a crash during a group's write) reopens to exactly the groups
// whose records are whole: a prefix of the acknowledged appends, never a part of one;
// the same with zeros after the cut (the zeroer's, written ahead): a zero tail is the
// log's end, a torn record before zeros is cut with a warning, and dsd check agrees.
// Spec: DESIGN.md D4.
func TestTornLogTailReopensToAPrefix(t *testing.T) {
	for _, zeros := range []int{0, 3000} {
		t.Run(fmt.Sprintf("zeros=%d", zeros), func(t *testing.T) { tornTail(t, zeros) })
	}
}

func tornTail(t *testing.T, zeros int) {
	const n = 40
	template, seg := crashedDir(t, n)
	full, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	ends := recordEnds(full)
	if len(ends) != n {
		t.Fatalf("%d records in the log, want %d", len(ends), n)
	}
	img := readDir(t, template)
	root := t.TempDir()
	for _, cut := range cuts(ends) {
		dir := filepath.Join(root, strconv.Itoa(cut))
		img.write(t, dir)
		path := filepath.Join(dir, boltstore.LogDir, filepath.Base(seg))
		if err := os.Truncate(path, int64(cut)); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(path, int64(cut+zeros)); err != nil { // zeros after the cut
			t.Fatal(err)
		}
		whole := 0
		for whole < n && ends[whole] <= cut {
			whole++
		}
		torn := cut > 0 && (whole == 0 || ends[whole-1] != cut)
		rep, err := boltstore.CheckFile(filepath.Join(dir, boltstore.FileName))
		if err != nil || len(rep.Problems) != 0 || rep.Logged != whole || rep.LoggedTorn != torn {
			t.Fatalf("cut at %d: check: %v %+v, want %d groups, torn=%v", cut, err, rep, whole, torn)
		}
		warned := 0
		opts := never
		opts.Warn = func(string, ...any) { warned++ }
		st, err := boltstore.Open(dir, opts)
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		tail, data := contents(t, st)
		if tail != uint64(whole*10) || data != prefix(whole) {
			t.Fatalf("cut at %d: tail %d, data %q; want the first %d appends", cut, tail, data, whole)
		}
		if (warned == 1) != torn {
			t.Fatalf("cut at %d: %d warnings, torn=%v", cut, warned, torn)
		}
		st.Close()
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
	}
}

// cuts returns the log sizes to try: every byte of the first three records (headers,
// payloads, boundaries), then around each later boundary and inside each later record.
func cuts(ends []int) []int {
	var out []int
	for c := 0; c <= ends[2]; c++ {
		out = append(out, c)
	}
	for i := 3; i < len(ends); i++ {
		start := ends[i-1]
		out = append(out, start+1, start+7, start+8, start+9, (start+ends[i])/2, ends[i]-1, ends[i])
	}
	return out
}

// recordEnds returns the end offset of each record of a segment (its frames' lengths).
func recordEnds(seg []byte) []int {
	var ends []int
	for at := 0; at+8 <= len(seg); {
		at += 8 + int(binary.LittleEndian.Uint32(seg[at:]))
		ends = append(ends, at)
	}
	return ends
}

// A damaged record followed by valid ones is corruption, not a torn write, whether the
// damage is in its bytes or its length: Open refuses with ErrLogCorrupt and dsd check
// reports it.
func TestDamagedLogRecordRefusesOpen(t *testing.T) {
	for _, where := range []string{"payload", "length"} {
		t.Run(where, func(t *testing.T) {
			dir, seg := crashedDir(t, 10)
			b, _ := os.ReadFile(seg)
			at := recordEnds(b)[4] // record 6 of 10
			if where == "payload" {
				at += 12
			} else {
				at += 1
			}
			b[at] ^= 0x5a
			if err := os.WriteFile(seg, b, 0o600); err != nil {
				t.Fatal(err)
			}
			refusesDamagedLog(t, dir)
		})
	}
}

// dsd check counts the logged groups a stopped server left for the next start.
func TestCheckCountsLoggedGroups(t *testing.T) {
	dir, _ := crashedDir(t, 7)
	rep, err := boltstore.CheckFile(filepath.Join(dir, boltstore.FileName))
	if err != nil || len(rep.Problems) != 0 || rep.Logged != 7 {
		t.Fatalf("check: %v %+v", err, rep)
	}
}

// A copy under another name beside a data directory's log (dsd backup --out DATA_DIR/x.db)
// is checked alone: that log is not the copy's, and Open never replays it into the copy.
func TestCheckCopyIgnoresLogBeside(t *testing.T) {
	dir, _ := crashedDir(t, 7)
	data, err := os.ReadFile(filepath.Join(dir, boltstore.FileName))
	if err != nil {
		t.Fatal(err)
	}
	copyPath := filepath.Join(dir, "copy.db")
	if err := os.WriteFile(copyPath, data, 0o600); err != nil {
		t.Fatal(err)
	}
	rep, err := boltstore.CheckFile(copyPath)
	if err != nil || len(rep.Problems) != 0 || rep.Logged != 0 {
		t.Fatalf("check of the copy: %v %+v", err, rep)
	}
}

// A clean Close leaves no log: the data file is complete on its own.
func TestCloseLeavesNoLog(t *testing.T) {
	dir := t.TempDir()
	st, err := boltstore.Open(dir, never)
	if err != nil {
		t.Fatal(err)
	}
	logStream(t, st)
	appendUnit(t, st, 0, 0)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, boltstore.LogDir)); !os.IsNotExist(err) {
		t.Fatalf("log directory after Close: %v", err)
	}
	rep, err := boltstore.CheckFile(filepath.Join(dir, boltstore.FileName))
	if err != nil || len(rep.Problems) != 0 || rep.Streams != 1 || rep.Logged != 0 {
		t.Fatalf("check: %v %+v", err, rep)
	}
}

// crashHelperEnv names the data directory the helper process appends to until killed.
const crashHelperEnv = "BOLTSTORE_CRASH_HELPER_DIR"

// TestMain runs the helper process when asked: it appends with fsync and no checkpoint,
// printing each acknowledged tail, until it is killed.
func TestMain(m *testing.M) {
	if dir := os.Getenv(crashHelperEnv); dir != "" {
		crashHelper(dir)
		return
	}
	os.Exit(m.Run())
}

func crashHelper(dir string) {
	st, err := boltstore.Open(dir, boltstore.Options{CheckpointBytes: -1, CheckpointInterval: -1})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	var tb testing.B // Fatal is never reached: every commit is expected to succeed
	logStream(&tb, st)
	tail := uint64(0)
	for i := 0; ; i++ {
		tail = appendUnit(&tb, st, i, tail)
		fmt.Println(tail)
	}
}

// SIGKILL between the log's write and any checkpoint loses nothing acknowledged: every
// group is in the log only, and reopening replays them. Spec: DESIGN.md D4.
func TestKillBeforeCheckpointLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills a process; skipped with -short")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashHelperEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := uint64(0)
	lines := bufio.NewScanner(out)
	for n := 0; n < 300 && lines.Scan(); n++ {
		if acked, err = strconv.ParseUint(lines.Text(), 10, 64); err != nil {
			t.Fatalf("helper said %q", lines.Text())
		}
	}
	_ = cmd.Process.Kill()
	_, _ = io.Copy(io.Discard, out)
	_ = cmd.Wait()
	if acked == 0 {
		t.Fatal("the helper acknowledged nothing")
	}
	rep, err := boltstore.CheckFile(filepath.Join(dir, boltstore.FileName))
	if err != nil || len(rep.Problems) != 0 || rep.Logged < int(acked/10) {
		t.Fatalf("check before reopen: %v %+v (acknowledged %d appends)", err, rep, acked/10)
	}
	st, err := boltstore.Open(dir, never)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tail, data := contents(t, st)
	if tail < acked || data != prefix(int(tail/10)) {
		t.Fatalf("after the kill: tail %d (acknowledged %d), data is a prefix: %v", tail, acked, data == prefix(int(tail/10)))
	}
	t.Logf("killed after %d acknowledged appends in the log only; reopened with %d", acked/10, tail/10)
}

// checkpointedDir leaves in a directory the state a crash leaves after every one of n
// appends was checkpointed: the data file's log position is the end of the only segment.
func checkpointedDir(t *testing.T, n int) (dir, seg string) {
	opts := never
	opts.CheckpointBytes, opts.CheckpointInline = 1, true
	st, live, _ := openWithAppends(t, opts, n)
	return crashCopy(t, st, live)
}

// A segment shorter than the data file's log position (truncated, or replaced by another
// file) has lost groups: Open refuses with ErrLogCorrupt and dsd check reports it. A
// position at the segment's very end is a whole log.
func TestLogPositionPastTheSegmentRefusesOpen(t *testing.T) {
	for _, how := range []string{"intact", "truncated", "replaced"} {
		t.Run(how, func(t *testing.T) {
			dir, seg := checkpointedDir(t, 6)
			b, _ := os.ReadFile(seg)
			switch how {
			case "truncated":
				b = b[:recordEnds(b)[3]]
			case "replaced":
				b = boltstore.EncodeLogRecord([]storage.Change{{SID: 1, Records: true}})
			}
			if err := os.WriteFile(seg, b, 0o600); err != nil {
				t.Fatal(err)
			}
			rep, err := boltstore.CheckFile(filepath.Join(dir, boltstore.FileName))
			if err != nil {
				t.Fatal(err)
			}
			st, err := boltstore.Open(dir, never)
			if how == "intact" {
				if err != nil || len(rep.Problems) != 0 || rep.Logged != 0 {
					t.Fatalf("intact: open %v, check %+v", err, rep)
				}
				defer st.Close()
				if tail, data := contents(t, st); tail != 60 || data != prefix(6) {
					t.Fatalf("intact: tail %d, data %q", tail, data)
				}
				return
			}
			if len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0], "only") {
				t.Fatalf("check: %+v", rep)
			}
			if !errors.Is(err, boltstore.ErrLogCorrupt) {
				t.Fatalf("open: %v, want ErrLogCorrupt", err)
			}
		})
	}
}

// A log far larger than the recovery's transaction bound is replayed whole, in many
// transactions, and leaves no log behind.
func TestRecoveryInBoundedTransactionsReplaysAll(t *testing.T) {
	const n = 50
	dir, _ := crashedDir(t, n)
	opts := never
	opts.CheckpointBytes = 100 // a few records per transaction
	st, err := boltstore.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	tail, data := contents(t, st)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if tail != n*10 || data != prefix(n) {
		t.Fatalf("tail %d, data %q; want %d appends", tail, data, n)
	}
	rep, err := boltstore.CheckFile(filepath.Join(dir, boltstore.FileName))
	if err != nil || len(rep.Problems) != 0 || rep.Logged != 0 {
		t.Fatalf("check: %v %+v", err, rep)
	}
}

// A recovery cut short after any of its transactions (a crash while replaying, maybe
// more than once, with other bounds) resumes from the stored position: every group is
// applied exactly once, across segment ends too, and no log is left. Spec: DESIGN.md D4.
func TestRecoveryCrashedMidwayResumes(t *testing.T) {
	const n = 40
	opts := never
	opts.SegmentBytes = 200 // several segments: runs cross segment ends
	st, live, _ := openWithAppends(t, opts, n)
	img := readDir(t, live)
	segs, _ := filepath.Glob(filepath.Join(live, boltstore.LogDir, "*.seg"))
	st.Close()
	if len(segs) < 3 {
		t.Fatalf("segments %v, want several", segs)
	}
	for k := 0; ; k++ {
		dir := t.TempDir()
		img.write(t, dir)
		applied, err := boltstore.ReplayRuns(dir, 90, k)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := boltstore.ReplayRuns(dir, 37, 2); err != nil { // a second crash
			t.Fatal(err)
		}
		st, err := boltstore.Open(dir, never)
		if err != nil {
			t.Fatalf("after %d runs: %v", k, err)
		}
		tail, data := contents(t, st)
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		if tail != n*10 || data != prefix(n) {
			t.Fatalf("after %d runs: tail %d, data %q; want %d appends", k, tail, data, n)
		}
		rep, err := boltstore.CheckFile(filepath.Join(dir, boltstore.FileName))
		if err != nil || len(rep.Problems) != 0 || rep.Logged != 0 {
			t.Fatalf("after %d runs: check %v %+v", k, err, rep)
		}
		if applied < k {
			return // every run was applied once
		}
	}
}
