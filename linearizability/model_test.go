package linearizability

import (
	"errors"
	"strings"
	"testing"
)

func step(t *testing.T, s State, in Input, out Output, wantOK bool) State {
	t.Helper()
	in.prepare()
	ok, next := Step(s, in, out)
	if ok != wantOK {
		t.Fatalf("Step(%s, %s → %s) = %t, want %t", s, in, out, ok, wantOK)
	}
	return next
}

func created(t *testing.T) State {
	return step(t, State{}, create("s"), Output{Status: 201, Offset: tok(0)}, true)
}

// An append's offset sorts after the tail's, and the tail then reads back as that
// offset. Spec: B-8-01, B-5.2-09.
func TestStepAppendOffsets(t *testing.T) {
	s := created(t)
	step(t, s, appendIn("s", "ab"), Output{Status: 204, Offset: tok(0)}, false)
	step(t, s, appendIn("s", "ab"), Output{Status: 204}, false)
	s = step(t, s, appendIn("s", "ab"), Output{Status: 204, Offset: tok(2)}, true)
	step(t, s, Input{Kind: OpHead, Stream: "s"}, Output{Status: 200, Offset: tok(3)}, false)
	step(t, s, Input{Kind: OpHead, Stream: "s"}, Output{Status: 200, Offset: tok(2)}, true)
	step(t, s, Input{Kind: OpRead, Stream: "s"}, readOut("ab", false), true)
	step(t, s, Input{Kind: OpRead, Stream: "s"}, readOut("ba", false), false)
}

// A duplicate is a 204 reporting the highest accepted seq; nothing is written.
// Spec: B-5.2.1-03, B-5.2.1-04.
func TestStepProducerDuplicate(t *testing.T) {
	s := created(t)
	s = step(t, s, prod("s", "a", "p", 0, 0), Output{Status: 200, Offset: tok(1), Seq: u64p(0)}, true)
	s = step(t, s, prod("s", "b", "p", 0, 1), Output{Status: 200, Offset: tok(2), Seq: u64p(1)}, true)
	step(t, s, prod("s", "a", "p", 0, 0), Output{Status: 204, Seq: u64p(0)}, false)
	next := step(t, s, prod("s", "a", "p", 0, 0), Output{Status: 204, Seq: u64p(1)}, true)
	if next != s {
		t.Fatalf("a duplicate changed the state: %s → %s", s, next)
	}
	step(t, s, prod("s", "c", "p", 0, 3), Output{Status: 409, Expected: u64p(2), Received: u64p(3)}, true)
	step(t, s, prod("s", "c", "p", 0, 3), Output{Status: 409, Expected: u64p(1), Received: u64p(3)}, false)
}

// On a closed stream a close-only with the closing tuple is 204, with any other tuple 409
// with Stream-Closed and the final offset. Spec: A-07 step 3, D9.
func TestStepCloseOnlyOnAClosedStream(t *testing.T) {
	s := created(t)
	closing := prod("s", "a", "p", 0, 0)
	closing.Close = true
	s = step(t, s, closing, Output{Status: 200, Offset: tok(1), Closed: true, Seq: u64p(0)}, true)
	retry := prod("s", "", "p", 0, 0)
	retry.Close = true
	step(t, s, retry, Output{Status: 204, Offset: tok(1), Closed: true}, true)
	other := prod("s", "", "q", 0, 0)
	other.Close = true
	step(t, s, other, Output{Status: 204, Offset: tok(1), Closed: true}, false)
	step(t, s, other, Output{Status: 409, Offset: tok(1), Closed: true}, true)
	step(t, s, other, Output{Status: 409, Offset: tok(1)}, false)
}

// An append whose outcome is unknown takes effect when it is admissible, leaving the
// tail's offset unknown but bounded; an inadmissible one changes nothing.
func TestStepUnknownAppend(t *testing.T) {
	s := created(t)
	s = step(t, s, prod("s", "a", "p", 1, 0), Output{Status: 200, Offset: tok(1), Seq: u64p(0)}, true)
	stale := step(t, s, prod("s", "zz", "p", 0, 0), Output{Error: "timeout"}, true)
	if stale != s {
		t.Fatalf("a stale producer's unknown append changed the state: %s", stale)
	}
	landed := step(t, s, appendIn("s", "bc"), Output{Error: "timeout"}, true)
	if landed.Len != 3 || landed.TailExact {
		t.Fatalf("unknown append: %s", landed)
	}
	step(t, landed, Input{Kind: OpHead, Stream: "s"}, Output{Status: 200, Offset: tok(1)}, false)
	step(t, landed, Input{Kind: OpHead, Stream: "s"}, Output{Status: 200, Offset: tok(3)}, true)
}

// A history that breaks the recording rules is refused before linearization.
func TestAssumptions(t *testing.T) {
	overlap := History{Ops: []Op{
		{Client: 0, Call: 0, Return: 10, Input: create("s"), Output: Output{Status: 201, Offset: tok(0)}},
		{Client: 0, Call: 5, Return: 12, Input: Input{Kind: OpHead, Stream: "s"}, Output: Output{Status: 200, Offset: tok(0)}},
	}}
	unknownRead := History{Ops: []Op{{Client: 0, Call: 0, Input: Input{Kind: OpRead, Stream: "s"}}}}
	afterUnknown := History{Ops: []Op{
		{Client: 0, Call: 0, Input: appendIn("s", "a")},
		{Client: 0, Call: 5, Return: 6, Input: Input{Kind: OpHead, Stream: "s"}, Output: Output{Status: 404}},
	}}
	for name, h := range map[string]History{"overlap": overlap, "unknown read": unknownRead, "after unknown": afterUnknown} {
		res := Check(h, CheckOptions{})
		if res.OK() || !errors.Is(res.Errors[0], errAssumption) {
			t.Errorf("%s: %v", name, res.Err())
		}
	}
}

// After a write with an unknown outcome the recorder continues under a new client id,
// and a read with an unknown outcome is not recorded.
func TestRecorderSwitchesClientAfterUnknownWrite(t *testing.T) {
	r := NewRecorder()
	c := r.Client()
	c.Do(appendIn("s", "a"), func() Output { return Output{Error: "timeout"} })
	c.Do(Input{Kind: OpRead, Stream: "s"}, func() Output { return Output{Error: "timeout"} })
	c.Do(Input{Kind: OpHead, Stream: "s"}, func() Output { return Output{Status: 404} })
	ops := r.Ops()
	if len(ops) != 2 || ops[0].Client == ops[1].Client || ops[0].Return != 0 {
		t.Fatalf("ops %+v", ops)
	}
	if err := (History{Ops: ops}).CheckAssumptions(); err != nil {
		t.Fatal(err)
	}
}

// The offsets post-pass reports two offsets for one position, one offset for two
// positions, and offsets out of position order. Spec: B-8-01.
func TestOffsetsPostPass(t *testing.T) {
	cases := map[string][]tokenAt{
		"two tokens":  {{"s", 1, "b", "x"}, {"s", 1, "c", "y"}},
		"two places":  {{"s", 1, "b", "x"}, {"s", 2, "b", "y"}},
		"order":       {{"s", 1, "c", "x"}, {"s", 2, "b", "y"}},
		"other order": {{"s", 0, "a", "x"}, {"s", 5, "e", "y"}, {"s", 3, "f", "z"}},
	}
	for name, obs := range cases {
		if errs := checkOffsets(obs); len(errs) == 0 {
			t.Errorf("%s: not reported", name)
		}
	}
	ok := []tokenAt{{"s", 0, "a", ""}, {"s", 2, "c", ""}, {"s", 2, "c", ""}, {"t", 2, "a", ""}}
	if errs := checkOffsets(ok); len(errs) != 0 {
		t.Errorf("consistent observations reported: %v", errs)
	}
}

// Every violation message names the guarantee it breaks and the requirement behind it.
func TestGuaranteesQuoteTheSpec(t *testing.T) {
	for _, err := range []error{errBrokeOrdered, errBrokeGapless, errBrokeUnique, errBrokeResumable,
		errBrokeClosedIsFinal, errBrokeReachesEOF, errOffsetNotUnique, errOffsetOrder} {
		if !strings.HasPrefix(err.Error(), "broke ") || !strings.Contains(err.Error(), "B-") {
			t.Errorf("%q", err)
		}
	}
}
