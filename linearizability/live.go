package linearizability

import (
	"bytes"
	"errors"
	"fmt"
)

// Live reads (long-poll, SSE) are not linearizable operations: a subscriber sees a
// sequence of chunks over time. Each subscriber's transcript is checked against the
// stream's final content with named guarantees (etcd's watch validators), each error
// quoting the guarantee it breaks.
var (
	errBrokeOrdered       = errors.New("broke Ordered: a live reader must see the stream's bytes in stream order, each chunk starting where the previous one ended (B-5.7-04, B-5.8-10)")
	errBrokeGapless       = errors.New("broke Gapless: a live reader must not skip bytes (B-5.7-02, B-5.8-10)")
	errBrokeUnique        = errors.New("broke Unique: a live reader must not receive the same bytes twice (B-5.8-10)")
	errBrokeResumable     = errors.New("broke Resumable: reading from any offset a live reader was given must return exactly the rest of the stream (B-5.8-07, B-8-01)")
	errBrokeClosedIsFinal = errors.New("broke ClosedIsFinal: EOF comes once, last, at the final offset, and only on a closed stream (B-5.7-06, B-5.7-07, B-5.8-06)")
	errBrokeReachesEOF    = errors.New("broke ReachesEOF: a live reader of a closed stream must reach EOF (B-4-04, B-5.7-06, B-5.8-06)")
)

// Transcript is what one live reader received, in order.
type Transcript struct {
	Stream string      `json:"stream"`
	Mode   string      `json:"mode"` // "long-poll", "sse" or "wait" (engine level)
	Events []LiveEvent `json:"events"`
	// End says how the reader stopped: "eof", or why not.
	End string `json:"end"`
}

// LiveEvent is one response (long-poll) or one data/control pair (SSE).
type LiveEvent struct {
	// From is the offset this event continues from: the request's offset for a
	// long-poll response or the first event of an SSE connection, else the previous
	// control event's streamNextOffset. "-1" at the stream start.
	From string `json:"from"`
	// Data holds the bytes delivered (decoded from base64 for binary SSE).
	Data []byte `json:"data,omitempty"`
	// Next is Stream-Next-Offset (long-poll) or streamNextOffset (SSE control).
	Next   string `json:"next"`
	Closed bool   `json:"closed,omitempty"`
	// Reconnect marks the first event of a new request or connection.
	Reconnect bool `json:"reconnect,omitempty"`
}

// positions returns the byte position after each event (the cumulative data length).
func (t Transcript) positions() []uint64 {
	out := make([]uint64, len(t.Events))
	var pos uint64
	for i, ev := range t.Events {
		pos += uint64(len(ev.Data))
		out[i] = pos
	}
	return out
}

// CheckTranscript validates one transcript against its stream's final state. It returns
// every broken guarantee it finds (fstest's habit: report all misbehaviours).
func CheckTranscript(t Transcript, f Final) []error {
	var errs []error
	bad := func(guarantee error, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s reader of %s: %w: %s", t.Mode, t.Stream, guarantee,
			fmt.Sprintf(format, args...)))
	}
	var pos uint64
	prev := "-1"
	for i, ev := range t.Events {
		if ev.From != prev {
			bad(errBrokeOrdered, "event %d continues from %q, the previous one ended at %q", i, ev.From, prev)
		}
		if len(ev.Data) > 0 && ev.From != "-1" && ev.Next <= ev.From {
			bad(errBrokeOrdered, "event %d carries data but its offset %q does not advance past %q", i, ev.Next, ev.From)
		}
		if len(ev.Data) == 0 && ev.From != "-1" && ev.Next != ev.From {
			bad(errBrokeOrdered, "event %d carries no data but moves the offset from %q to %q", i, ev.From, ev.Next)
		}
		if err := classifyChunk(f.Content, pos, ev.Data); err != nil {
			bad(err, "event %d: %d bytes at position %d do not match the stream", i, len(ev.Data), pos)
			return errs // positions are meaningless from here on
		}
		pos += uint64(len(ev.Data))
		prev = ev.Next
		if ev.Closed {
			switch {
			case i != len(t.Events)-1:
				bad(errBrokeClosedIsFinal, "event %d signals EOF but %d more follow", i, len(t.Events)-1-i)
			case !f.Closed:
				bad(errBrokeClosedIsFinal, "EOF on a stream that is not closed")
			case pos != uint64(len(f.Content)) || ev.Next != f.Offset:
				bad(errBrokeClosedIsFinal, "EOF at position %d (%q), the final content ends at %d (%q)",
					pos, ev.Next, len(f.Content), f.Offset)
			}
		}
	}
	if f.Closed && t.End != "eof" {
		bad(errBrokeReachesEOF, "the reader stopped (%s) after %d of %d bytes", t.End, pos, len(f.Content))
	}
	return errs
}

// classifyChunk checks that chunk sits at pos in content and names the guarantee it
// breaks when it does not: bytes already delivered (Unique), bytes from further on
// (Gapless), anything else (Ordered).
func classifyChunk(content []byte, pos uint64, chunk []byte) error {
	if pos+uint64(len(chunk)) <= uint64(len(content)) && bytes.Equal(content[pos:pos+uint64(len(chunk))], chunk) {
		return nil
	}
	if len(chunk) == 0 {
		return nil
	}
	if i := bytes.Index(content, chunk); i >= 0 && uint64(i) < pos {
		return errBrokeUnique
	} else if i >= 0 {
		return errBrokeGapless
	}
	if pos >= uint64(len(content)) {
		return errBrokeGapless
	}
	return errBrokeOrdered
}
