package linearizability

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dsd-project/dsd/httpd"
	"github.com/dsd-project/dsd/model"
)

var flagUpdate = flag.Bool("lin.update-fixtures", false, "rewrite testdata/ (hand-written pairs and recorded runs)")

// Every history under testdata/ named *-ok.jsonl passes every check and every one named
// *-bad.jsonl is rejected (porcupine's good/bad pairs). The same files are re-checked by
// `make linearizability-reports` through dslincheck.
func TestFixtures(t *testing.T) {
	if *flagUpdate {
		writeFixtures(t)
	}
	files, err := filepath.Glob(filepath.Join("testdata", "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	pairs := map[string]int{}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			fh, err := os.Open(f)
			if err != nil {
				t.Fatal(err)
			}
			defer fh.Close()
			h, err := ReadJSONL(fh)
			if err != nil {
				t.Fatal(err)
			}
			res := Check(h, CheckOptions{Timeout: time.Minute})
			switch {
			case strings.HasSuffix(name, "-ok.jsonl"):
				if !res.OK() {
					t.Fatalf("a good history was rejected: %s\n%s", res.Summary(), describeErrors(res.Errors))
				}
			case strings.HasSuffix(name, "-bad.jsonl"):
				if res.OK() {
					t.Fatalf("a bad history was accepted: %s", res.Summary())
				}
				t.Logf("rejected: %v", res.Errors[len(res.Errors)-1])
			default:
				t.Fatalf("fixture names end in -ok.jsonl or -bad.jsonl")
			}
		})
		pairs[strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, ".jsonl"), "-ok"), "-bad")]++
	}
	t.Logf("%d fixtures, %d stems", len(files), len(pairs))
}

// hist builds a hand-written history. Offsets are dsd-style tokens of byte positions.
type hist struct{ h History }

func tok(n int) string { return model.Offset(n).String() }

func (b *hist) op(client int, call, ret int64, in Input, out Output) *hist {
	if out.Unknown() {
		ret = 0
	}
	b.h.Ops = append(b.h.Ops, Op{Client: client, Call: call, Return: ret, Input: in, Output: out})
	return b
}

func create(s string) Input { return Input{Kind: OpCreate, Stream: s} }

func appendIn(s, body string) Input { return Input{Kind: OpAppend, Stream: s, Body: body} }

func readOut(content string, closed bool) Output {
	return Output{Status: 200, Offset: tok(len(content)), Closed: closed, Len: uint64(len(content)),
		Digest: DigestOf([]byte(content))}
}

func prod(s, body, id string, epoch, seq uint64) Input {
	in := appendIn(s, body)
	in.Producer = &Producer{ID: id, Epoch: epoch, Seq: seq}
	return in
}

// handWritten returns the hand-written fixture pairs, by file name.
func handWritten() map[string]History {
	out := map[string]History{}
	base := func() *hist {
		b := &hist{}
		return b.op(0, 0, 1, create("s"), Output{Status: 201, Offset: tok(0)})
	}
	read := Input{Kind: OpRead, Stream: "s"}
	head := Input{Kind: OpHead, Stream: "s"}
	closeIn := Input{Kind: OpAppend, Stream: "s", Close: true}

	// An acknowledged append is visible to a read that starts afterwards (B-5.6-09).
	out["read-after-append-ok"] = base().op(0, 2, 3, appendIn("s", "abc"), Output{Status: 204, Offset: tok(3)}).
		op(1, 4, 5, read, readOut("abc", false)).h
	out["read-after-append-bad"] = base().op(0, 2, 3, appendIn("s", "abc"), Output{Status: 204, Offset: tok(3)}).
		op(1, 4, 5, read, Output{Status: 200, Offset: tok(0)}).h

	// Concurrent appends land in the order of their offsets (B-4-01, B-8-01).
	out["concurrent-appends-ok"] = base().op(0, 2, 6, appendIn("s", "aa"), Output{Status: 204, Offset: tok(5)}).
		op(1, 3, 7, appendIn("s", "bbb"), Output{Status: 204, Offset: tok(3)}).
		op(2, 8, 9, read, readOut("bbbaa", false)).h
	out["concurrent-appends-bad"] = base().op(0, 2, 6, appendIn("s", "aa"), Output{Status: 204, Offset: tok(2)}).
		op(1, 3, 7, appendIn("s", "bbb"), Output{Status: 204, Offset: tok(5)}).
		op(2, 8, 9, read, readOut("bbbaa", false)).h

	// Offsets of later appends sort after earlier ones (B-8-01).
	out["offsets-increase-bad"] = base().op(0, 2, 3, appendIn("s", "aa"), Output{Status: 204, Offset: tok(2)}).
		op(0, 4, 5, appendIn("s", "b"), Output{Status: 204, Offset: "0000000000000000_0000000000000001"}).h

	// A retried producer append is deduplicated (B-5.2.1-03).
	out["producer-retry-ok"] = base().op(0, 2, 3, prod("s", "x", "p", 0, 0), Output{Status: 200, Offset: tok(1), Epoch: u64p(0), Seq: u64p(0)}).
		op(0, 4, 5, prod("s", "x", "p", 0, 0), Output{Status: 204, Offset: tok(1), Epoch: u64p(0), Seq: u64p(0)}).
		op(1, 6, 7, read, readOut("x", false)).h
	out["producer-retry-bad"] = base().op(0, 2, 3, prod("s", "x", "p", 0, 0), Output{Status: 200, Offset: tok(1), Epoch: u64p(0), Seq: u64p(0)}).
		op(0, 4, 5, prod("s", "x", "p", 0, 0), Output{Status: 200, Offset: tok(2), Epoch: u64p(0), Seq: u64p(0)}).
		op(1, 6, 7, read, readOut("xx", false)).h

	// After a close, appends are refused with the final offset (B-5.2-07, B-5.2-10).
	out["append-after-close-ok"] = base().op(0, 2, 3, appendIn("s", "ab"), Output{Status: 204, Offset: tok(2)}).
		op(0, 4, 5, closeIn, Output{Status: 204, Offset: tok(2), Closed: true}).
		op(1, 6, 7, appendIn("s", "c"), Output{Status: 409, Offset: tok(2), Closed: true}).
		op(1, 8, 9, head, Output{Status: 200, Offset: tok(2), Closed: true}).h
	out["append-after-close-bad"] = base().op(0, 2, 3, appendIn("s", "ab"), Output{Status: 204, Offset: tok(2)}).
		op(0, 4, 5, closeIn, Output{Status: 204, Offset: tok(2), Closed: true}).
		op(1, 6, 7, appendIn("s", "c"), Output{Status: 204, Offset: tok(3)}).h

	// Stream-Seq must strictly increase (B-5.2-05).
	seq := func(body, v string) Input { in := appendIn("s", body); in.StreamSeq = v; return in }
	out["stream-seq-ok"] = base().op(0, 2, 3, seq("a", "0000000002"), Output{Status: 204, Offset: tok(1)}).
		op(1, 4, 5, seq("b", "0000000001"), Output{Status: 409}).
		op(1, 6, 7, read, readOut("a", false)).h
	out["stream-seq-bad"] = base().op(0, 2, 3, seq("a", "0000000002"), Output{Status: 204, Offset: tok(1)}).
		op(1, 4, 5, seq("b", "0000000001"), Output{Status: 204, Offset: tok(2)}).h

	// A refusal that reports an offset reports the tail's (B-8-01: the token names the
	// tail's position everywhere else), as a server that answers refusals with the tail
	// does (issue 18).
	refusal := func(off int) History {
		return base().op(0, 2, 3, seq("a", "0000000002"), Output{Status: 204, Offset: tok(1)}).
			op(0, 4, 5, appendIn("s", "bc"), Output{Status: 204, Offset: tok(3)}).
			op(1, 6, 7, seq("d", "0000000001"), Output{Status: 409, Offset: tok(off)}).
			op(1, 8, 9, head, Output{Status: 200, Offset: tok(3)}).h
	}
	out["refusal-offset-ok"] = refusal(3)
	out["refusal-offset-bad"] = refusal(1)

	// A write with an unknown outcome may have happened, or not (etcd's MaxInt64 return).
	out["unknown-append-landed-ok"] = base().op(0, 2, 3, appendIn("s", "a"), Output{Error: "timeout"}).
		op(1, 4, 5, read, readOut("a", false)).h
	out["unknown-append-lost-ok"] = base().op(0, 2, 3, appendIn("s", "a"), Output{Error: "timeout"}).
		op(1, 4, 5, read, readOut("", false)).h
	out["unknown-append-bad"] = base().op(0, 2, 3, appendIn("s", "a"), Output{Error: "timeout"}).
		op(1, 4, 5, read, readOut("aa", false)).h

	// Append-batch frames are appends, in frame order (extension §4.4).
	batch := Input{Kind: OpBatch, Stream: "s", Frames: []string{"ab", "c"}}
	out["batch-ok"] = base().op(0, 2, 3, batch, Output{Status: 200, Acks: []Ack{{Status: 204, Offset: tok(2)},
		{Status: 204, Offset: tok(3)}}}).op(1, 4, 5, read, readOut("abc", false)).h
	out["batch-bad"] = base().op(0, 2, 3, batch, Output{Status: 200, Acks: []Ack{{Status: 204, Offset: tok(2)},
		{Status: 204, Offset: tok(3)}}}).op(1, 4, 5, read, readOut("ab", false)).h

	// After retention moves to the visible snapshot, a read from -1 starts there, and
	// bootstrap is the snapshot plus what follows it (extension §2.2, §3.2).
	snapshotted := func() *hist {
		return base().op(0, 2, 3, appendIn("s", "abc"), Output{Status: 204, Offset: tok(3)}).
			op(0, 4, 5, Input{Kind: OpSnapshot, Stream: "s", Offset: tok(3), Body: "S"},
				Output{Status: 204, SnapOffset: tok(3), SnapDigest: blobDigest("S")}).
			op(0, 6, 7, appendIn("s", "de"), Output{Status: 204, Offset: tok(5)}).
			op(0, 8, 9, Input{Kind: OpRetain, Stream: "s", Offset: tok(3)}, Output{Status: 204, Offset: tok(5)})
	}
	boot := Output{Status: 200, Offset: tok(5), SnapOffset: tok(3), SnapDigest: blobDigest("S"),
		Blob: blobDigest("S"), Len: 2, Digest: DigestOf([]byte("de"))}
	out["retention-ok"] = snapshotted().op(1, 10, 11, read, Output{Status: 200, Offset: tok(5), Len: 2,
		Digest: DigestOf([]byte("de"))}).op(1, 12, 13, Input{Kind: OpBootstrap, Stream: "s"}, boot).h
	out["retention-bad"] = snapshotted().op(1, 10, 11, read, readOut("abcde", false)).h
	staleBoot := boot
	staleBoot.SnapOffset, staleBoot.Blob, staleBoot.SnapDigest = "-1", emptyPart, ""
	out["bootstrap-without-snapshot-bad"] = snapshotted().op(1, 12, 13, Input{Kind: OpBootstrap, Stream: "s"}, staleBoot).h

	// Live readers: ordered, gap-free, unique, EOF last and at the end (live.go).
	liveBase := func() *hist {
		b := base().op(0, 2, 3, appendIn("s", "ab"), Output{Status: 204, Offset: tok(2)}).
			op(0, 4, 5, appendIn("s", "cd"), Output{Status: 204, Offset: tok(4)}).
			op(0, 6, 7, closeIn, Output{Status: 204, Offset: tok(4), Closed: true}).
			op(0, 8, 9, read, readOut("abcd", true))
		b.h.Finals = []Final{{Stream: "s", Content: []byte("abcd"), Offset: tok(4), Closed: true}}
		return b
	}
	live := func(end string, evs ...LiveEvent) History {
		b := liveBase()
		b.h.Live = []Transcript{{Stream: "s", Mode: "sse", Events: evs, End: end}}
		return b.h
	}
	ev := func(from int, data string, next int, closed bool) LiveEvent {
		f := "-1"
		if from >= 0 {
			f = tok(from)
		}
		return LiveEvent{From: f, Data: []byte(data), Next: tok(next), Closed: closed}
	}
	out["live-ok"] = live("eof", ev(-1, "ab", 2, false), ev(2, "cd", 4, false), ev(4, "", 4, true))
	out["live-gap-bad"] = live("eof", ev(-1, "ab", 2, false), ev(2, "d", 4, true))
	out["live-duplicate-bad"] = live("eof", ev(-1, "ab", 2, false), ev(2, "ab", 4, false), ev(4, "", 4, true))
	out["live-early-eof-bad"] = live("eof", ev(-1, "ab", 2, true), ev(2, "cd", 4, true))
	out["live-no-eof-bad"] = live("stopped", ev(-1, "abcd", 4, false))
	out["live-offset-mismatch-bad"] = live("eof", ev(-1, "ab", 3, false), ev(3, "cd", 4, true))
	return out
}

// writeFixtures rewrites testdata/: the hand-written pairs, and small recorded runs: one
// of dsd's engine (ok), one through a double that reports the tail on refusals (ok) and
// one through each planted bug (bad).
func writeFixtures(t *testing.T) {
	if err := os.MkdirAll("testdata", 0o755); err != nil {
		t.Fatal(err)
	}
	for name, h := range handWritten() {
		writeHistory(t, name, h)
	}
	cfg := Config{Clients: 8, Ops: 160, Streams: 3, Seed: 42, LiveTimeout: 20 * time.Second}
	recordClient := func(name string, client Client, wantOK bool) {
		for attempt := 0; attempt < 20; attempt++ {
			cfg.Prefix = fmt.Sprintf("fx%d", attempt) // fresh streams: the last run soft-deleted its forked ones
			run, err := Record(context.Background(), client, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if res := CheckRun(run, CheckOptions{}); res.OK() == wantOK && len(run.Errors) == 0 {
				writeHistory(t, name, run.History)
				return
			}
			cfg.Seed++
		}
		t.Fatalf("could not record %s", name)
	}
	record := func(name string, store httpd.Store, wantOK bool) {
		recordClient(name, EngineClient{Store: store, Bucket: "fixtures-" + name}, wantOK)
	}
	record("dsd-engine-ok", httpd.EngineStore{Engine: openEngine(t)}, true)
	record("dsd-engine-lost-responses-ok", &flaky{Store: httpd.EngineStore{Engine: openEngine(t)},
		rng: rand.New(rand.NewPCG(3, 4))}, true)
	recordClient("tail-on-refusal-ok", tailOnRefusal{EngineClient{Store: httpd.EngineStore{Engine: openEngine(t)},
		Bucket: "fixtures-tail-on-refusal"}}, true)
	for _, pc := range planted {
		record("planted-"+pc.name+"-bad", pc.wrap(httpd.EngineStore{Engine: openEngine(t)}), false)
	}
}

func writeHistory(t *testing.T, name string, h History) {
	f, err := os.Create(filepath.Join("testdata", name+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := h.WriteJSONL(f); err != nil {
		t.Fatal(err)
	}
}
