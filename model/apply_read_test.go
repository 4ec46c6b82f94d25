package model

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// -1 and an omitted offset read from the start, "now" reads nothing at the tail, an
// offset past the tail or inside a message is 400, and malformed offsets are 400.
// Spec: B-8-03, B-8-04, B-5.6-08, A-15, A-35.
func TestReadOffsets(t *testing.T) {
	m := newMachine(t)
	m.want(create("text/plain", "hello"), StatusCreated)
	m.want(post("text/plain", "world"), StatusNoContent)
	for _, o := range []string{"", "-1", ZeroOffset.String()} {
		if res := m.want(read(o), StatusOK); string(res.Body) != "helloworld" || !res.UpToDate || next(res) != Offset(10).String() {
			t.Fatalf("read %q: %+v", o, res)
		}
	}
	if res := m.want(read("now"), StatusOK); len(res.Body) != 0 || !res.UpToDate || next(res) != Offset(10).String() {
		t.Fatalf("now: %+v", res)
	}
	if res := m.want(read(Offset(5).String()), StatusOK); string(res.Body) != "world" {
		t.Fatalf("from 5: %q", res.Body)
	}
	m.wantErr(read(Offset(3).String()), StatusBadRequest, ErrOffsetNotBoundary)
	m.wantErr(read(Offset(11).String()), StatusBadRequest, ErrOffsetBeyondTail)
	m.wantErr(read("9999999999999999_9999999999999999"), StatusBadRequest, ErrOffsetBeyondTail)
	for _, bad := range []string{"", "0", "abc", "-2", "0000000000000000_000000000000000", "0000000000000000,0000000000000000"} {
		c := ReadStream{Stream: sk, Offset: Str(bad)}
		m.wantErr(c, StatusBadRequest, ErrBadOffset)
	}
}

// A catch-up response cuts only at message boundaries, holds at least one message, and
// omits Stream-Up-To-Date until it reaches the tail. Spec: A-16, B-5.6-05, B-5.6-09.
func TestReadIsChunkedAtMessageBoundaries(t *testing.T) {
	m := newMachine(t)
	m.s = NewState(Config{ReadChunkBytes: 4})
	m.want(CreateBucket{Bucket: "test"}, StatusCreated)
	m.want(create("text/plain", "ab"), StatusCreated)
	m.want(post("text/plain", "cd"), StatusNoContent)
	m.want(post("text/plain", "efghij"), StatusNoContent)
	m.want(post("text/plain", "k"), StatusNoContent)
	var got []string
	for o := "-1"; ; {
		res := m.want(read(o), StatusOK)
		got = append(got, string(res.Body))
		o = next(res)
		if res.UpToDate {
			break
		}
	}
	if want := []string{"abcd", "efghij", "k"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("chunks %q, want %q", got, want)
	}
}

// A closed stream's last chunk and the empty read at its tail carry Stream-Closed and
// Stream-Up-To-Date; "now" on a closed stream too. Spec: B-5.6-06, B-5.6-07, B-8-07.
func TestReadOfClosedStreamSignalsEOF(t *testing.T) {
	m := newMachine(t)
	m.want(create("application/json", `[1,2]`), StatusCreated)
	m.want(closeOnly(), StatusNoContent)
	for _, o := range []string{"-1", "now", Offset(4).String()} {
		res := m.want(read(o), StatusOK)
		if !res.Closed || !res.UpToDate || next(res) != Offset(4).String() {
			t.Fatalf("read %s: %+v", o, res)
		}
	}
	if res := m.want(read("now"), StatusOK); string(res.Body) != "[]" {
		t.Fatalf("now on JSON: %q", res.Body)
	}
}

// GET and POST restart a sliding TTL, HEAD does not; once it lapses every method is 404
// and PUT re-creates the stream. Spec: B-5.1-04, B-5.1-08, A-14.
func TestSlidingTTL(t *testing.T) {
	m := newMachine(t)
	c := create("text/plain", "")
	c.TTL = Str("10")
	m.want(c, StatusCreated)
	m.tick(8 * time.Second)
	m.want(read("-1"), StatusOK)
	m.tick(8 * time.Second)
	m.want(post("text/plain", "x"), StatusNoContent)
	m.tick(8 * time.Second)
	if res := m.want(HeadStream{Stream: sk}, StatusOK); res.TTL == nil || *res.TTL != 10 {
		t.Fatalf("HEAD TTL %v", res.TTL)
	}
	m.tick(2*time.Second + time.Millisecond)
	m.wantErr(HeadStream{Stream: sk}, StatusNotFound, ErrStreamNotFound)
	m.wantErr(read("-1"), StatusNotFound, ErrStreamNotFound)
	m.wantErr(post("text/plain", "x"), StatusNotFound, ErrStreamNotFound)
	m.want(c, StatusCreated)
	if got := m.readAll(); got != "" {
		t.Fatalf("re-created stream holds %q", got)
	}
}

// A failed POST on a live stream still restarts its TTL, since the TTL restarts when
// the request starts. Spec: A-14.
func TestFailedPostRestartsTTL(t *testing.T) {
	m := newMachine(t)
	c := create("text/plain", "")
	c.TTL = Str("10")
	m.want(c, StatusCreated)
	m.tick(9 * time.Second)
	m.wantErr(post("application/json", "1"), StatusConflict, ErrContentTypeMismatch)
	m.tick(9 * time.Second)
	m.want(HeadStream{Stream: sk}, StatusOK)
}

// Expires-At is never extended. Spec: B-5.1-08.
func TestExpiresAtIsAbsolute(t *testing.T) {
	m := newMachine(t)
	c := create("text/plain", "")
	c.ExpiresAt = Str(t0.Add(10 * time.Second).Format(time.RFC3339))
	m.want(c, StatusCreated)
	m.tick(9 * time.Second)
	m.want(read("-1"), StatusOK)
	m.tick(time.Second)
	m.wantErr(read("-1"), StatusNotFound, ErrStreamNotFound)
}

// Buckets: 201 then 409 on re-create, 404 when missing, 409 while they hold a live
// stream, 204 once empty; expired streams are not held. Spec: X-1.2-03, X-1.3-01,
// X-1.5-01, X-1.5-02, A-14.
func TestBuckets(t *testing.T) {
	m := newMachine(t)
	m.wantErr(CreateBucket{Bucket: "test"}, StatusConflict, ErrBucketExists)
	m.wantErr(CreateBucket{Bucket: "no"}, StatusBadRequest, ErrBadBucketID)
	m.wantErr(GetBucket{Bucket: "none"}, StatusNotFound, ErrBucketNotFound)
	c := create("text/plain", "")
	c.TTL = Str("1")
	m.want(c, StatusCreated)
	if res := m.want(GetBucket{Bucket: "test"}, StatusOK); res.Bucket.Streams != 1 {
		t.Fatalf("bucket %+v", res.Bucket)
	}
	m.wantErr(DeleteBucket{Bucket: "test"}, StatusConflict, ErrBucketNotEmpty)
	m.tick(2 * time.Second)
	if res := m.want(GetBucket{Bucket: "test"}, StatusOK); res.Bucket.Streams != 0 {
		t.Fatalf("expired streams are not counted: %+v", res.Bucket)
	}
	m.want(DeleteBucket{Bucket: "test"}, StatusNoContent)
	m.wantErr(DeleteBucket{Bucket: "test"}, StatusNotFound, ErrBucketNotFound)
	m.wantErr(c, StatusNotFound, ErrBucketNotFound)
}

// Apply is a pure function of (state, command, now): replaying a random script from any
// saved intermediate state gives the same results again (the raft "determinism" habit).
func TestApplyIsDeterministicAndPure(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cmds := []func() Command{
		func() Command { return create([]string{"text/plain", "application/json", ""}[rng.IntN(3)], "[1]") },
		func() Command { return post("text/plain", "ab") },
		func() Command { return post("application/json", "[1,2]") },
		func() Command { return post("text/plain", "x").withProducer("p", "0", string(rune('0'+rng.IntN(4)))) },
		func() Command { return closeOnly() },
		func() Command { return read([]string{"-1", "now", Offset(2).String()}[rng.IntN(3)]) },
		func() Command { return HeadStream{Stream: sk} },
		func() Command { return DeleteStream{Stream: sk} },
	}
	m := newMachine(t)
	var states []State
	var script []Command
	var results []Result
	for i := 0; i < 300; i++ {
		c := cmds[rng.IntN(len(cmds))]()
		states = append(states, m.s)
		script = append(script, c)
		results = append(results, m.do(c))
	}
	for start := 0; start < len(script); start += 37 {
		s := states[start]
		for i := start; i < len(script); i++ {
			var res Result
			s, res = s.Apply(script[i], t0)
			if !reflect.DeepEqual(res, results[i]) {
				t.Fatalf("replay from %d: command %d %s gave %+v, first run %+v", start, i, script[i].Name(), res, results[i])
			}
		}
	}
}
