package model

import (
	"errors"
	"testing"
)

// When several conflicts apply, closed is reported before a Content-Type mismatch, and
// a mismatch before a Stream-Seq regression. Spec: B-5.2-11, A-07.
func TestAppendConflictsAreReportedClosedThenTypeThenSeq(t *testing.T) {
	m := newMachine(t)
	m.want(create("text/plain", ""), StatusCreated)
	m.want(post("text/plain", "a").seq("5"), StatusNoContent)
	m.wantErr(post("application/json", "1").seq("1"), StatusConflict, ErrContentTypeMismatch)
	m.wantErr(post("text/plain", "b").seq("1"), StatusConflict, ErrStreamSeqConflict)
	m.want(closeOnly(), StatusNoContent)
	res := m.want(post("application/json", "1").seq("1"), StatusConflict)
	var ce *ClosedError
	if !errors.As(res.Err, &ce) || ce.Final != 1 {
		t.Fatalf("want a ClosedError at the final offset, got %v", res.Err)
	}
}

// Syntax is judged first: producer headers, then an empty body without close, then the
// Content-Type of a body; an empty-bodied close ignores its Content-Type entirely.
// Spec: A-07 step 1, B-5.2-02, B-5.2-03, B-5.2-06, B-5.2.1-01.
func TestAppendSyntaxErrorsComeFirst(t *testing.T) {
	m := newMachine(t)
	c := post("", "").withProducer("p", "0", "x")
	c.Stream.Stream = "missing"
	m.wantErr(c, StatusBadRequest, ErrBadProducer)
	c = post("", "")
	c.Stream.Stream = "missing"
	m.wantErr(c, StatusBadRequest, ErrEmptyBody)
	c = post("", "body")
	c.Stream.Stream = "missing"
	m.wantErr(c, StatusBadRequest, ErrMissingContentType)
	c.ContentType = Str("nonsense")
	m.wantErr(c, StatusBadRequest, ErrBadContentType)
	c.ContentType = Str("text/plain")
	m.wantErr(c, StatusNotFound, ErrStreamNotFound)

	m.want(create("application/json", ""), StatusCreated)
	cl := closeOnly()
	cl.ContentType = Str("text/plain")
	if res := m.want(cl, StatusNoContent); !res.Closed {
		t.Fatal("close-only must report Stream-Closed")
	}
	partial := post("application/json", "1")
	partial.ProducerID = Str("p")
	m.wantErr(partial, StatusBadRequest, ErrBadProducer)
	m.wantErr(post("application/json", "1").seq(""), StatusBadRequest, ErrBadStreamSeq)
}

// Stream-Seq values compare as raw bytes and must strictly increase.
// Spec: B-5.2-05, A-06.
func TestStreamSeqComparesRawBytes(t *testing.T) {
	cases := []struct {
		first, second string
		ok            bool
	}{{"2", "10", false}, {"09", "10", true}, {"a", "B", false}, {"001", "001", false}, {"a", "b", true}}
	for _, c := range cases {
		m := newMachine(t)
		m.want(create("text/plain", ""), StatusCreated)
		m.want(post("text/plain", "x").seq(c.first), StatusNoContent)
		if c.ok {
			m.want(post("text/plain", "y").seq(c.second), StatusNoContent)
		} else {
			m.wantErr(post("text/plain", "y").seq(c.second), StatusConflict, ErrStreamSeqConflict)
		}
	}
}

// Stream-Seq is recorded only with data and ignored on close-only requests.
// Spec: A-06.
func TestStreamSeqIgnoredOnCloseOnly(t *testing.T) {
	m := newMachine(t)
	m.want(create("text/plain", ""), StatusCreated)
	m.want(post("text/plain", "x").seq("5"), StatusNoContent)
	m.want(closeOnly().seq("1"), StatusNoContent)
}

// The producer validation table, row by row. Spec: B-5.2.1-03, B-5.2.1-04, A-08.
func TestProducerValidationTable(t *testing.T) {
	m := newMachine(t)
	m.want(create("text/plain", ""), StatusCreated)
	p := func(e, s, body string) AppendStream { return post("text/plain", body).withProducer("p", e, s) }

	res := m.wantErr(p("0", "1", "a"), StatusConflict, &SeqGapError{})
	if g := res.Err.(*SeqGapError); g.Expected != 0 || g.Received != 1 {
		t.Fatalf("unknown producer gap: %+v", g)
	}
	if res := m.want(p("3", "0", "a"), StatusOK); res.Producer.Epoch != 3 || res.Producer.Seq != 0 || next(res) != Offset(1).String() {
		t.Fatalf("first append: %+v", res)
	}
	m.want(p("3", "1", "b"), StatusOK)
	m.want(p("3", "2", "c"), StatusOK)
	res = m.want(p("3", "1", "B"), StatusNoContent)
	if res.Producer.Seq != 2 || next(res) != Offset(3).String() {
		t.Fatalf("retry of 1 after 0,1,2 reports Producer-Seq %d offset %s; want 2 and the tail", res.Producer.Seq, next(res))
	}
	m.want(post("text/plain", "d"), StatusNoContent)
	if res := m.want(p("3", "2", "C"), StatusNoContent); next(res) != Offset(3).String() {
		t.Fatalf("a duplicate of the last seq reports its original offset: %s", next(res))
	}
	res = m.wantErr(p("3", "5", "e"), StatusConflict, &SeqGapError{})
	if g := res.Err.(*SeqGapError); g.Expected != 3 || g.Received != 5 {
		t.Fatalf("gap: %+v", g)
	}
	res = m.wantErr(p("2", "0", "e"), StatusForbidden, &StaleEpochError{})
	if res.Err.(*StaleEpochError).Current != 3 {
		t.Fatalf("stale epoch reports %v", res.Err)
	}
	m.wantErr(p("4", "1", "e"), StatusBadRequest, ErrEpochSeqNotZero)
	m.want(p("4", "0", "e"), StatusOK)
	if got := m.readAll(); got != "abcde" {
		t.Fatalf("duplicates and rejected appends must write nothing: %q", got)
	}
}

// Producer dedup comes before the Stream-Seq check: a retry with the same Stream-Seq is
// a 204 duplicate, not a 409. Spec: B-5.2.1-05.
func TestProducerDedupBeforeStreamSeq(t *testing.T) {
	m := newMachine(t)
	m.want(create("text/plain", ""), StatusCreated)
	m.want(post("text/plain", "a").withProducer("p", "0", "0").seq("1"), StatusOK)
	m.want(post("text/plain", "a").withProducer("p", "0", "0").seq("1"), StatusNoContent)
}

// A final append with producer headers closes atomically (200), and a retry of the
// exact closing tuple is deduplicated with its body ignored; any other producer append
// is 409; a close-only with producer headers is 204 only for the closing tuple (echoed),
// any other tuple 409 with Stream-Closed. Spec: B-5.2.1-04, B-5.2.1-08, B-5.2.1-09, A-09, D9.
func TestCloseWithProducerIsDeduplicated(t *testing.T) {
	m := newMachine(t)
	m.want(create("text/plain", ""), StatusCreated)
	res := m.want(post("text/plain", "body-A").withProducer("p", "0", "0").closing(), StatusOK)
	if !res.Closed || res.Producer.Seq != 0 {
		t.Fatalf("append-and-close: %+v", res)
	}
	if res := m.want(post("text/plain", "body-B").withProducer("p", "0", "0").closing(), StatusNoContent); !res.Closed {
		t.Fatal("dedup of the closing tuple must report Stream-Closed")
	}
	m.wantErr(post("text/plain", "x").withProducer("p", "0", "1"), StatusConflict, &ClosedError{})
	m.wantErr(post("text/plain", "x").withProducer("q", "0", "0"), StatusConflict, &ClosedError{})
	var ce *ClosedError
	if res := m.wantErr(closeOnly().withProducer("q", "7", "7"), StatusConflict, &ClosedError{}); !errors.As(res.Err, &ce) || ce.Final != 6 {
		t.Fatalf("close-only of a foreign tuple: %v, want STREAM_CLOSED with the final offset 6", res.Err)
	}
	m.wantErr(closeOnly().withProducer("p", "0", "1"), StatusConflict, &ClosedError{})
	if res := m.want(closeOnly().withProducer("p", "0", "0"), StatusNoContent); res.Producer == nil || res.Producer.Epoch != 0 || res.Producer.Seq != 0 {
		t.Fatalf("close-only of the closing tuple: producer ack %+v, want epoch 0 seq 0", res.Producer)
	}
	if got := m.readAll(); got != "body-A" {
		t.Fatalf("read %q", got)
	}
}

// A known producer with a stale epoch gets 403 even on a closed stream.
// Spec: B-5.2.1-09, A-07 step 3.
func TestStaleProducerOnClosedStreamIs403(t *testing.T) {
	m := newMachine(t)
	m.want(create("text/plain", ""), StatusCreated)
	m.want(post("text/plain", "a").withProducer("p", "1", "0"), StatusOK)
	m.want(closeOnly(), StatusNoContent)
	m.wantErr(post("text/plain", "x").withProducer("p", "0", "5"), StatusForbidden, &StaleEpochError{})
}

// A close-only request with producer headers on an open stream is sequenced like an
// append: a gap is 409; accepted, it is 204 with the producer headers and is recorded
// as the closing tuple. Spec: A-09, B-5.2.1-08.
func TestCloseOnlyWithProducerIsSequenced(t *testing.T) {
	m := newMachine(t)
	m.want(create("text/plain", ""), StatusCreated)
	m.want(post("text/plain", "a").withProducer("p", "0", "0"), StatusOK)
	m.wantErr(closeOnly().withProducer("p", "0", "2"), StatusConflict, &SeqGapError{})
	res := m.want(closeOnly().withProducer("p", "0", "1"), StatusNoContent)
	if !res.Closed || res.Producer == nil || res.Producer.Seq != 1 {
		t.Fatalf("close-only with producer: %+v", res)
	}
	m.want(post("text/plain", "zzz").withProducer("p", "0", "1"), StatusNoContent)
}

// A duplicate close-only on an open stream writes nothing, so the stream stays open.
// Spec: B-5.2.1-03 ("nothing is written"), A-09.
func TestDuplicateCloseOnlyDoesNotClose(t *testing.T) {
	m := newMachine(t)
	m.want(create("text/plain", ""), StatusCreated)
	m.want(post("text/plain", "a").withProducer("p", "0", "0"), StatusOK)
	if res := m.want(closeOnly().withProducer("p", "0", "0"), StatusNoContent); res.Closed {
		t.Fatal("a duplicate must not close the stream")
	}
	m.want(post("text/plain", "b"), StatusNoContent)
}

// An append to a closed stream is 409 with Stream-Closed and the final offset; a
// close-only on a closed stream is 204. Spec: B-5.2-07, B-5.2-10, B-5.3-01.
func TestAppendToClosedStream(t *testing.T) {
	m := newMachine(t)
	m.want(create("text/plain", "abc"), StatusCreated)
	cl := m.want(post("text/plain", "d").closing(), StatusNoContent)
	if !cl.Closed || next(cl) != Offset(4).String() {
		t.Fatalf("append-and-close: %+v", cl)
	}
	res := m.want(post("text/plain", "e"), StatusConflict)
	if ce, ok := res.Err.(*ClosedError); !ok || ce.Final != 4 {
		t.Fatalf("closed error %v", res.Err)
	}
	if res := m.want(closeOnly(), StatusNoContent); !res.Closed || next(res) != next(cl) {
		t.Fatalf("idempotent close: %+v", res)
	}
}

// In JSON mode one level of a top-level array is flattened and "[]" is refused on
// POST; invalid JSON is 400 and writes nothing. Spec: B-9.1-02, B-9.1-03.
func TestJSONAppendFlattensOneLevel(t *testing.T) {
	m := newMachine(t)
	m.want(create("application/json", ""), StatusCreated)
	m.want(post("application/json", `{"e":1}`), StatusNoContent)
	m.want(post("application/json; charset=utf-8", `[[1,2],[3,4]]`), StatusNoContent)
	m.want(post("application/json", `[[[1,2,3]]]`), StatusNoContent)
	m.wantErr(post("application/json", `[]`), StatusBadRequest, ErrEmptyJSONArray)
	m.wantErr(post("application/json", `[1,`), StatusBadRequest, ErrInvalidJSON)
	if got := m.readAll(); got != `[{"e":1},[1,2],[3,4],[[1,2,3]]]` {
		t.Fatalf("read %q", got)
	}
	v, _ := m.s.Stream(sk, m.now)
	if len(v.Boundaries) != 5 {
		t.Fatalf("four messages make five boundaries: %v", v.Boundaries)
	}
}
