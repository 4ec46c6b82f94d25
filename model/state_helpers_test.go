package model

import (
	"errors"
	"testing"
	"time"
)

// machine drives a State through commands at a controllable time, keeping every
// intermediate state so tests can also check that Apply never changed an earlier one.
type machine struct {
	t   *testing.T
	s   State
	now time.Time
}

var t0 = time.Date(2027, 1, 2, 3, 4, 5, 0, time.UTC)

func newMachine(t *testing.T) *machine {
	t.Helper()
	m := &machine{t: t, s: NewState(Config{}), now: t0}
	m.want(CreateBucket{Bucket: "test"}, StatusCreated)
	return m
}

func (m *machine) do(c Command) Result {
	m.t.Helper()
	before := m.s
	snapshot := describeState(before, m.now)
	next, res := m.s.Apply(c, m.now)
	if after := describeState(before, m.now); after != snapshot {
		m.t.Fatalf("%s mutated its receiver:\nbefore %s\nafter  %s", c.Name(), snapshot, after)
	}
	m.s = next
	return res
}

// want applies c and checks its status.
func (m *machine) want(c Command, status int) Result {
	m.t.Helper()
	res := m.do(c)
	if res.Status != status {
		m.t.Fatalf("%s: status %d (%v), want %d", c.Name(), res.Status, res.Err, status)
	}
	return res
}

// wantErr applies c and checks its status and error.
func (m *machine) wantErr(c Command, status int, err error) Result {
	m.t.Helper()
	res := m.want(c, status)
	if !errors.Is(res.Err, err) && ErrorCode(res.Err) != ErrorCode(err) {
		m.t.Fatalf("%s: error %v (%s), want %v (%s)", c.Name(), res.Err, ErrorCode(res.Err), err, ErrorCode(err))
	}
	return res
}

func (m *machine) tick(d time.Duration) { m.now = m.now.Add(d) }

// describeState renders everything observable about s, to detect mutation.
func describeState(s State, now time.Time) string {
	out := ""
	for _, k := range s.Streams() {
		st := s.streams[k]
		out += k.String() + ":" + string(st.data) + "|" + st.tail().String()
		if st.closed {
			out += "|closed"
		}
		out += "|" + time.UnixMilli(st.accessMs).String()
		for id, p := range st.producers {
			out += "|" + id + ":" + p.LastEnd.String()
		}
		out += ";"
	}
	for b := range s.buckets {
		out += "bucket " + b + ";"
	}
	return out
}

var sk = StreamKey{Bucket: "test", Stream: "s"}

func create(ct string, body string) CreateStream {
	c := CreateStream{Stream: sk, Body: []byte(body)}
	if ct != "" {
		c.ContentType = Str(ct)
	}
	return c
}

func post(ct, body string) AppendStream {
	c := AppendStream{Stream: sk, Body: []byte(body)}
	if ct != "" {
		c.ContentType = Str(ct)
	}
	return c
}

func (c AppendStream) withProducer(id, epoch, seq string) AppendStream {
	c.ProducerID, c.ProducerEpoch, c.ProducerSeq = Str(id), Str(epoch), Str(seq)
	return c
}

func (c AppendStream) closing() AppendStream {
	c.Closed = Str("true")
	return c
}

func (c AppendStream) seq(v string) AppendStream {
	c.StreamSeq = Str(v)
	return c
}

func closeOnly() AppendStream { return AppendStream{Stream: sk, Closed: Str("true")} }

func read(offset string) ReadStream {
	if offset == "" {
		return ReadStream{Stream: sk}
	}
	return ReadStream{Stream: sk, Offset: Str(offset)}
}

// readAll reads the stream from the start and returns its body.
func (m *machine) readAll() string {
	m.t.Helper()
	return string(m.want(read("-1"), StatusOK).Body)
}

func next(r Result) string {
	if r.NextOffset == nil {
		return "<none>"
	}
	return r.NextOffset.String()
}
