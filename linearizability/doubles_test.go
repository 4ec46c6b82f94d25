package linearizability

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/dsd-project/dsd/httpd"
)

// tailOnRefusal is a test double of a server that reports the tail's offset on its
// refusals (400, 403, 409, 412), as the upstream Caddy server does, where dsd sends none
// on most. It asks the server for the tail after the refusal, inside the operation's
// window, at a point where the refusal still holds (Stream-Seq and epochs only grow, and
// each producer id belongs to one sequential client), unless a close came in between:
// then the refusal stays without an offset.
// It pauses before answering (up to 2 ms) so that refusals overlap other writes, as
// they do over a network.
type tailOnRefusal struct{ Client }

func (c tailOnRefusal) withTail(stream string, out Output) Output {
	switch out.Status {
	case 400, 403, 409, 412:
		if out.Offset == "" {
			time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond)
			if h := c.Client.Head(stream); h.Status == 200 && h.Closed == out.Closed {
				out.Offset = h.Offset
			}
		}
	}
	return out
}

func (c tailOnRefusal) Append(in Input) Output { return c.withTail(in.Stream, c.Client.Append(in)) }

func (c tailOnRefusal) Create(stream string) Output {
	return c.withTail(stream, c.Client.Create(stream))
}

func (c tailOnRefusal) Fork(stream, source, offset string) Output {
	return c.withTail(stream, c.Client.Fork(stream, source, offset))
}

// A server that reports the tail on refusals is linearizable, and the model checks the
// offsets it reports (issue 18 item 10: such tokens used to be placed anywhere in their
// operation's window, which produced false offset violations).
func TestTailOnRefusalIsNotAViolation(t *testing.T) {
	cfg := testConfig()
	client := tailOnRefusal{EngineClient{Store: httpd.EngineStore{Engine: openEngine(t)}, Bucket: "tail-refusal"}}
	run, res := recordAndCheck(t, client, cfg)
	if !res.OK() {
		t.Fatalf("false violations: %s\n%s", res.Summary(), describeErrors(res.Errors))
	}
	refusals := 0
	for _, op := range run.History.Ops {
		if op.Output.Status >= 400 && op.Output.Status != 404 && op.Output.Offset != "" {
			refusals++
		}
	}
	if refusals == 0 {
		t.Fatal("the run had no refusal carrying an offset: the test checks nothing")
	}
	t.Logf("%d refusals carried the tail; %s", refusals, res.Summary())
}

// staleMissing is a test double of a cache in front of a server that has kept a 404 of
// every stream from before it was created: once a stream is closed, its reads answer 404.
type staleMissing struct{ Client }

func (c staleMissing) ReadAll(stream string) (Output, []byte) {
	out, data := c.Client.ReadAll(stream)
	if out.Status == 200 && out.Closed {
		return Output{Status: 404}, nil
	}
	return out, data
}

// An unexpected status is an observation the model judges, never a recording error
// (issue 18 item 12): the run is recorded and reported as a violation, with the
// history.
func TestUnexpectedStatusIsAViolationNotARecordingError(t *testing.T) {
	cfg := testConfig()
	client := staleMissing{EngineClient{Store: httpd.EngineStore{Engine: openEngine(t)}, Bucket: "stale-missing"}}
	run, res := recordAndCheck(t, client, cfg)
	if res.OK() {
		t.Fatal("reads answering 404 on existing streams were accepted")
	}
	if len(run.History.Ops) == 0 {
		t.Fatal("no history recorded")
	}
	t.Logf("reported: %v", res.Errors[0])
}
