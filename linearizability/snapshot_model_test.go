package linearizability

import "testing"

func snapIn(at, blob string) Input {
	return Input{Kind: OpSnapshot, Stream: "s", Offset: at, Body: blob}
}

func snapOK(at, blob string) Output {
	return Output{Status: 204, SnapOffset: at, SnapDigest: blobDigest(blob)}
}

// A snapshot is published at the tail; at its own offset the same blob is idempotent and
// another is 409; HEAD reports it; reading it returns its blob. Spec: extension §2.2,
// §2.4, §2.5.
func TestStepSnapshotPublish(t *testing.T) {
	s := created(t)
	s = step(t, s, appendIn("s", "abc"), Output{Status: 204, Offset: tok(3)}, true)
	step(t, s, snapIn(tok(1), "x"), snapOK(tok(1), "x"), false) // position unknown to the model
	step(t, s, snapIn(tok(3), "x"), snapOK(tok(3), "y"), false) // wrong digest
	s = step(t, s, snapIn(tok(3), "x"), snapOK(tok(3), "x"), true)
	s = step(t, s, appendIn("s", "de"), Output{Status: 204, Offset: tok(5)}, true)
	step(t, s, snapIn(tok(3), "x"), snapOK(tok(3), "x"), true)
	step(t, s, snapIn(tok(3), "z"), Output{Status: 409}, true)
	step(t, s, snapIn(tok(3), "z"), snapOK(tok(3), "z"), false)
	step(t, s, Input{Kind: OpHead, Stream: "s"}, Output{Status: 200, Offset: tok(5)}, false)
	step(t, s, Input{Kind: OpHead, Stream: "s"}, Output{Status: 200, Offset: tok(5), SnapOffset: tok(3)}, true)
	read := Input{Kind: OpSnapRead, Stream: "s"}
	step(t, s, read, Output{Status: 200, SnapOffset: tok(3), SnapDigest: blobDigest("x"), Blob: blobDigest("x")}, true)
	step(t, s, read, Output{Status: 200, SnapOffset: tok(3), SnapDigest: blobDigest("x"), Blob: blobDigest("q")}, false)
	step(t, created(t), read, Output{Status: 404}, true)
}

// Retention moves only to the visible snapshot (409 past it); afterwards a read from -1
// and bootstrap start at the boundary, a read from -1 resumes there after its 410.
// Spec: extension §2.2, §3.2, B-8-03, D2.
func TestStepRetentionAndBootstrap(t *testing.T) {
	s := created(t)
	s = step(t, s, appendIn("s", "abc"), Output{Status: 204, Offset: tok(3)}, true)
	step(t, s, Input{Kind: OpRetain, Stream: "s", Offset: tok(3)}, Output{Status: 204, Offset: tok(3)}, false)
	step(t, s, Input{Kind: OpRetain, Stream: "s", Offset: tok(3)}, Output{Status: 409}, true)
	step(t, s, Input{Kind: OpRetain, Stream: "s", Offset: tok(0)}, Output{Status: 204, Offset: tok(3)}, true)
	boot := Input{Kind: OpBootstrap, Stream: "s"}
	all := Output{Status: 200, Offset: tok(3), SnapOffset: "-1", Blob: emptyPart, Len: 3, Digest: DigestOf([]byte("abc"))}
	step(t, s, boot, all, true)
	s = step(t, s, snapIn(tok(3), "x"), snapOK(tok(3), "x"), true)
	s = step(t, s, appendIn("s", "de"), Output{Status: 204, Offset: tok(5)}, true)
	step(t, s, Input{Kind: OpRetain, Stream: "s", Offset: tok(5)}, Output{Status: 409}, true)
	s = step(t, s, Input{Kind: OpRetain, Stream: "s", Offset: tok(3)}, Output{Status: 204, Offset: tok(5)}, true)
	read := Input{Kind: OpRead, Stream: "s"}
	step(t, s, read, readOut("abcde", false), false)
	tail := Output{Status: 200, Offset: tok(5), Len: 2, Digest: DigestOf([]byte("de"))}
	step(t, s, read, tail, false) // D2: -1 is 410 once retention has advanced
	tail.Retained = tok(3)
	step(t, s, read, tail, true)
	tail.Retained = tok(0)
	step(t, s, read, tail, false)
	after := Output{Status: 200, Offset: tok(5), SnapOffset: tok(3), SnapDigest: blobDigest("x"), Blob: blobDigest("x"),
		Len: 2, Digest: DigestOf([]byte("de"))}
	step(t, s, boot, after, true)
	step(t, s, boot, all, false)
}

// A batch is its frames, appended in order, each acknowledged like its own append.
// Spec: extension §4.3, §4.4.
func TestStepBatch(t *testing.T) {
	s := created(t)
	b := Input{Kind: OpBatch, Stream: "s", Frames: []string{"ab", "c"}}
	step(t, s, b, Output{Status: 200, Acks: []Ack{{Status: 204, Offset: tok(2)}}}, false)
	step(t, s, b, Output{Status: 200, Acks: []Ack{{Status: 204, Offset: tok(1)}, {Status: 204, Offset: tok(3)}}}, true)
	s = step(t, s, b, Output{Status: 200, Acks: []Ack{{Status: 204, Offset: tok(2)}, {Status: 204, Offset: tok(3)}}}, true)
	step(t, s, Input{Kind: OpRead, Stream: "s"}, readOut("abc", false), true)
	s = step(t, s, Input{Kind: OpAppend, Stream: "s", Close: true}, Output{Status: 204, Offset: tok(3), Closed: true}, true)
	closed := Ack{Status: 409, Offset: tok(3), Closed: true}
	step(t, s, b, Output{Status: 200, Acks: []Ack{closed, closed}}, true)
	step(t, s, b, Output{Status: 200, Acks: []Ack{closed, {Status: 204, Offset: tok(4)}}}, false)
}

func jsonIn(body string) Input { return Input{Kind: OpAppend, Stream: "s-json", Body: body} }

// On a JSON stream every append gets the next ordinals, HEAD reports F and N, a
// Stream-Record-Match other than N is 412, and a read returns N - F messages.
// Spec: extension §6.3, §6.4, §6.5, §6.13.
func TestStepRecords(t *testing.T) {
	s := step(t, State{}, Input{Kind: OpCreate, Stream: "s-json"}, Output{Status: 201, Offset: tok(0),
		RecStart: u64p(0), RecNext: u64p(0)}, true)
	step(t, s, jsonIn(`["a","b"]`), Output{Status: 204, Offset: tok(8), RecStart: u64p(0), RecNext: u64p(1)}, false)
	s = step(t, s, jsonIn(`["a","b"]`), Output{Status: 204, Offset: tok(8), RecStart: u64p(0), RecNext: u64p(2)}, true)
	step(t, s, jsonIn(`"c"`), Output{Status: 204, Offset: tok(12), RecStart: u64p(1), RecNext: u64p(2)}, false)
	head := Input{Kind: OpHead, Stream: "s-json"}
	step(t, s, head, Output{Status: 200, Offset: tok(8), RecFirst: u64p(0), RecNext: u64p(2)}, true)
	step(t, s, head, Output{Status: 200, Offset: tok(8), RecFirst: u64p(0), RecNext: u64p(3)}, false)
	match := jsonIn(`"c"`)
	match.RecordMatch = u64p(1)
	step(t, s, match, Output{Status: 412, Offset: tok(8), RecNext: u64p(2)}, true)
	step(t, s, match, Output{Status: 204, Offset: tok(12), RecStart: u64p(2), RecNext: u64p(3)}, false)
	read := Input{Kind: OpRead, Stream: "s-json"}
	content := "\"a\"\n\"b\"\n"
	ok := Output{Status: 200, Offset: tok(8), Len: 8, Digest: DigestOf([]byte(content)), Msgs: 2}
	step(t, s, read, ok, true)
	ok.Msgs = 1
	step(t, s, read, ok, false)
	rr := Input{Kind: OpRecordRead, Stream: "s-json", Record: "tail"}
	step(t, s, rr, Output{Status: 200, Offset: tok(8), Len: 8, Digest: DigestOf([]byte(content)), Msgs: 2,
		RecFirst: u64p(0), RecStart: u64p(0), RecNext: u64p(2)}, true)
}

// A fork starts with the content its source had before the fork point and then only
// gets its own appends; its source, deleted, answers 410 (409 to PUT).
// Spec: B-4.2-02, B-4.2-10, B-4.2-18.
func TestStepForkAndSoftDelete(t *testing.T) {
	fork := Input{Kind: OpFork, Stream: "f", Source: "s", Offset: tok(3), InhLen: 3, InhDigest: DigestOf([]byte("abc"))}
	step(t, State{}, fork, Output{Status: 201, Offset: tok(5)}, false)
	f := step(t, State{}, fork, Output{Status: 201, Offset: tok(3)}, true)
	step(t, f, fork, Output{Status: 200, Offset: tok(3)}, true)
	f = step(t, f, Input{Kind: OpAppend, Stream: "f", Body: "x"}, Output{Status: 204, Offset: tok(4)}, true)
	step(t, f, Input{Kind: OpRead, Stream: "f"}, readOut("abcx", false), true)
	step(t, f, Input{Kind: OpRead, Stream: "f"}, readOut("abcdx", false), false)

	s := created(t)
	s = step(t, s, appendIn("s", "abc"), Output{Status: 204, Offset: tok(3)}, true)
	gone := step(t, s, Input{Kind: OpDelete, Stream: "s", Forked: true}, Output{Status: 204}, true)
	step(t, gone, Input{Kind: OpRead, Stream: "s"}, Output{Status: 410}, true)
	step(t, gone, Input{Kind: OpRead, Stream: "s"}, Output{Status: 404}, false)
	step(t, gone, create("s"), Output{Status: 409}, true)
	hard := step(t, s, Input{Kind: OpDelete, Stream: "s"}, Output{Status: 204}, true)
	step(t, hard, Input{Kind: OpRead, Stream: "s"}, Output{Status: 404}, true)
}
