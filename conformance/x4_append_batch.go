package conformance

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"strings"

	"github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// batchBody frames payloads for append-batch: uint32 big-endian length, then the payload
// (extension §4.1).
func batchBody(payloads ...[]byte) []byte {
	var b bytes.Buffer
	for _, p := range payloads {
		_ = binary.Write(&b, binary.BigEndian, uint32(len(p)))
		b.Write(p)
	}
	return b.Bytes()
}

// textFrames is batchBody for strings.
func textFrames(payloads ...string) []byte {
	bs := make([][]byte, len(payloads))
	for i, p := range payloads {
		bs[i] = []byte(p)
	}
	return batchBody(bs...)
}

// AppendBatch sends POST {stream}/append-batch with body, with the stream's content type
// unless opts change it.
func (st *Stream) AppendBatch(body []byte, opts ...Opt) *Response {
	ginkgo.GinkgoHelper()
	ct := st.ContentType
	if ct == "" {
		ct = ctText
	}
	return st.s.Do("POST", st.Ext+"/append-batch", append([]Opt{CT(ct), Body(body)}, opts...)...)
}

// batchAck is one decoded acknowledgement (extension §4.3).
type batchAck struct {
	Status int
	// NextOffset is stream_next_offset: a JSON string's value, or a number's literal.
	NextOffset string
	HasNext    bool
	Closed     *bool
	ErrorCode  *string
	Error      *string
	Fields     map[string]json.RawMessage
}

// ok reports a successful frame (2xx).
func (a batchAck) ok() bool { return a.Status >= 200 && a.Status < 300 }

// decodeAcks expects a 200 JSON array of n acknowledgements and decodes it.
func decodeAcks(r *Response, n int) []batchAck {
	ginkgo.GinkgoHelper()
	Expect(r).To(HaveStatus(200))
	Expect(r).To(HaveMediaType(ctJSON))
	var raw []map[string]json.RawMessage
	Expect(json.Unmarshal(r.Data, &raw)).To(Succeed(), "append-batch body %q is not a JSON array of objects", excerpt(r.Data, 300))
	Expect(raw).To(HaveLen(n), "one acknowledgement per frame: %s", excerpt(r.Data, 300))
	acks := make([]batchAck, n)
	for i, f := range raw {
		a := batchAck{Fields: f}
		Expect(f).To(HaveKey("status"), "ack %d: %v", i, f)
		Expect(json.Unmarshal(f["status"], &a.Status)).To(Succeed(), "ack %d status %s is not an integer", i, f["status"])
		if v, ok := f["stream_next_offset"]; ok && string(v) != "null" {
			a.HasNext = true
			if json.Unmarshal(v, &a.NextOffset) != nil {
				a.NextOffset = string(v)
			}
		}
		if v, ok := f["stream_closed"]; ok {
			a.Closed = new(bool)
			Expect(json.Unmarshal(v, a.Closed)).To(Succeed(), "ack %d stream_closed %s is not a boolean", i, v)
		}
		for name, dst := range map[string]**string{"error_code": &a.ErrorCode, "error": &a.Error} {
			if v, ok := f[name]; ok {
				*dst = new(string)
				Expect(json.Unmarshal(v, *dst)).To(Succeed(), "ack %d %s %s is not a string", i, name, v)
			}
		}
		acks[i] = a
	}
	return acks
}

// expectFailedAck checks a failed frame's acknowledgement: its status, error_code and
// error, and stream_next_offset (when present) at the tail the frame saw.
func expectFailedAck(a batchAck, i, status int, tail string) {
	ginkgo.GinkgoHelper()
	Expect(a.Status).To(Equal(status), "ack %d: %v", i, a.Fields)
	Expect(a.ErrorCode).NotTo(BeNil(), "ack %d of a failed frame has no error_code: %v", i, a.Fields)
	Expect(*a.ErrorCode).NotTo(BeEmpty(), "ack %d error_code", i)
	Expect(a.Error).NotTo(BeNil(), "ack %d of a failed frame has no error: %v", i, a.Fields)
	Expect(*a.Error).NotTo(BeEmpty(), "ack %d error", i)
	if a.HasNext {
		Expect(a.NextOffset).To(Equal(tail), "ack %d reports the stream tail", i)
	}
}

// mustBatch appends frames as a batch, expects every frame to succeed, and returns the
// acks' offsets.
func (st *Stream) mustBatch(frames ...string) []string {
	ginkgo.GinkgoHelper()
	acks := decodeAcks(st.AppendBatch(textFrames(frames...)), len(frames))
	var out []string
	for i, a := range acks {
		Expect(a.ok()).To(BeTrue(), "frame %d failed: %v", i, a.Fields)
		Expect(a.HasNext).To(BeTrue(), "ack %d of a successful frame has no stream_next_offset", i)
		out = append(out, a.NextOffset)
	}
	return out
}

// Spec: extension §4 (append-batch).
var _ = Section("x4", "X4 Append batch", Ext("append-batch"), func() {
	ConformanceIt(MUST, Reqs{"X-4.1-01", "X-4.1-03", "X-4.3-01", "X-4.3-02", "X-4.4-01"}, "appends each frame as its own append and acknowledges them in order", func(s *S) {
		st := s.Create("batch-basic", CT(ctText), Text("0|"))
		frames := []string{"a|", "bb|", "ccc|"}
		offs := st.mustBatch(frames...)
		Expect(offs[0]).To(BeOffset())
		Expect(offs[1]).To(SortAfter(offs[0]))
		Expect(offs[2]).To(SortAfter(offs[1]))
		Expect(st.Head()).To(HaveHeader(hNextOffset, offs[2]), "the last ack is the tail")
		all, _ := st.CatchUp(offsetStart)
		Expect(string(all)).To(Equal("0|a|bb|ccc|"))
		for i, o := range offs {
			rest, _ := st.CatchUp(o)
			Expect(string(rest)).To(Equal(strings.Join(frames[i+1:], "")), "reading from ack %d's offset", i)
		}
	})

	ConformanceIt(MUST, Reqs{"X-4.4-02", "X-4.4-03", "B-5.6-01", "B-5.7-02", "B-5.8-03"}, "reads batch data back identically through catch-up, long-poll and SSE from every ack offset", func(s *S) {
		st := s.Create("batch-read-modes", CT(ctText))
		frames := []string{"plain|", "two\nlines|", "data: not a field\n\n|", "ünï|"}
		offs := st.mustBatch(frames...)
		tail := offs[len(offs)-1]
		starts := append([]string{offsetStart}, offs[:len(offs)-1]...)
		for i, o := range starts {
			want := strings.Join(frames[i:], "")
			got, _ := st.CatchUp(o)
			Expect(string(got)).To(Equal(want), "catch-up from %q", o)
			Expect(string(bytes.Join(st.longPollAll(o, tail), nil))).To(Equal(want), "long-poll from %q", o)
			evs, c := st.sseCatchUp(o)
			c.Close()
			Expect(strings.Join(DataEvents(evs), "")).To(Equal(want), "SSE from %q", o)
			Expect(lastControl(evs).NextOffset).To(Equal(tail))
		}
	})

	ConformanceIt(MUST, Reqs{"X-4.4-02"}, "gives frames the offsets a twin stream fed by single POSTs gets (D2)", Profile("dsd"), func(s *S) {
		frames := []string{"x", "yy\n", "zzz", "\x00\x01"}
		batched := s.Create("batch-twin-a", CT(ctOctets), Text("head"))
		single := s.Create("batch-twin-b", CT(ctOctets), Text("head"))
		offs := batched.mustBatch(frames...)
		var want []string
		for _, f := range frames {
			want = append(want, single.MustAppend(f))
		}
		Expect(offs).To(Equal(want))
	})

	ConformanceIt(MUST, Reqs{"X-4-02", "X-4.4-01"}, "never concatenates frames into one message: JSON frames 1 and 2 read back as two messages", func(s *S) {
		st := s.Create("batch-json", CT(ctJSON))
		offs := st.mustBatch(`1`, `2`, `[3,4]`, `{"five":5}`)
		Expect(offs).To(HaveLen(4))
		msgs, _ := st.CatchUpJSON(offsetStart)
		Expect(compactMessages(msgs)).To(Equal([]string{`1`, `2`, `3`, `4`, `{"five":5}`}))
		after1, _ := st.CatchUpJSON(offs[0])
		Expect(compactMessages(after1)).To(Equal([]string{`2`, `3`, `4`, `{"five":5}`}), "reading after the first frame")
	})

	ConformanceIt(MUST, Reqs{"X-4.3-04", "X-4.3-02", "X-4.3-01"}, "reports failing frames inside the 200 and commits the others", func(s *S) {
		st := s.Create("batch-partial", CT(ctJSON))
		acks := decodeAcks(st.AppendBatch(textFrames(`1`, `{`, `[]`, `2`)), 4)
		Expect(acks[0].ok()).To(BeTrue(), "frame 0: %v", acks[0].Fields)
		Expect(acks[0].HasNext).To(BeTrue())
		expectFailedAck(acks[1], 1, 400, acks[0].NextOffset)
		expectFailedAck(acks[2], 2, 400, acks[0].NextOffset)
		Expect(acks[3].ok()).To(BeTrue(), "frame 3: %v", acks[3].Fields)
		Expect(acks[3].NextOffset).To(SortAfter(acks[0].NextOffset))
		Expect(st.Head()).To(HaveHeader(hNextOffset, acks[3].NextOffset))
		msgs, _ := st.CatchUpJSON(offsetStart)
		Expect(compactMessages(msgs)).To(Equal([]string{`1`, `2`}))
	})

	ConformanceIt(MUST, Reqs{"X-4.3-04", "X-4.3-02"}, "acknowledges every frame to a closed stream with 409 and stream_closed: true", func(s *S) {
		st := s.Create("batch-closed", CT(ctText), Text("done"))
		tail := st.MustClose().Get(hNextOffset)
		acks := decodeAcks(st.AppendBatch(textFrames("a", "b")), 2)
		for i, a := range acks {
			expectFailedAck(a, i, 409, tail)
			Expect(a.Closed).NotTo(BeNil(), "ack %d has no stream_closed: %v", i, a.Fields)
			Expect(*a.Closed).To(BeTrue())
		}
		Expect(st.Read(offsetStart)).To(HaveBody("done"))
	})

	ConformanceIt(MUST, Reqs{"X-4.1-02", "X-4.3-04"}, "fails every frame whose Content-Type differs from the stream's with 409 inside the 200", func(s *S) {
		st := s.Create("batch-ct", CT(ctOctets), Text("x"))
		tail := st.Head().Get(hNextOffset)
		acks := decodeAcks(st.AppendBatch(textFrames("a", "b"), CT(ctText)), 2)
		for i, a := range acks {
			expectFailedAck(a, i, 409, tail)
		}
		Expect(st.Head()).To(HaveHeader(hNextOffset, tail), "nothing committed")
	})

	ConformanceIt(MUST, Reqs{"X-4.1-04"}, "never commits a zero-length frame", func(s *S) {
		st := s.Create("batch-zero", CT(ctText), Text("x"))
		tail := st.Head().Get(hNextOffset)
		r := st.AppendBatch(batchBody([]byte("a"), nil, []byte("b")))
		if r.StatusCode == 200 {
			acks := decodeAcks(r, 3)
			Expect(acks[1].ok()).To(BeFalse(), "the zero-length frame was acknowledged as committed: %v", acks[1].Fields)
			Expect(acks[1].Status).To(Equal(400), "a zero-length frame is invalid")
			return
		}
		Expect(r).To(HaveStatus(400))
		Expect(st.Head()).To(HaveHeader(hNextOffset, tail), "a rejected request commits nothing")
	})

	ConformanceIt(MAY, Reqs{"X-4.3-03", "X-4.1-04", "X-4.1-03"}, "fails malformed framing as a whole with 400 and commits nothing", Profile("dsd"), func(s *S) {
		st := s.Create("batch-malformed", CT(ctText), Text("x"))
		tail := st.Head().Get(hNextOffset)
		cases := map[string][]byte{
			"a truncated length":      append(textFrames("ok"), 0, 0, 0),
			"a truncated payload":     append(textFrames("ok"), 0, 0, 0, 10, 'a', 'b'),
			"a zero-length frame":     batchBody([]byte("ok"), nil),
			"an empty body":           {},
			"a length past the body":  {0xff, 0xff, 0xff, 0xff, 'a'},
			"a lone zero-length head": {0, 0, 0, 0},
		}
		for name, body := range cases {
			Expect(st.AppendBatch(body)).To(HaveStatus(400), name)
			Expect(st.Head()).To(HaveHeader(hNextOffset, tail), "%s commits nothing", name)
		}
	})

	ConformanceIt(MUST, Reqs{"X-4.2-01"}, "never closes a stream from an append-batch request", func(s *S) {
		st := s.Create("batch-no-close", CT(ctText), Text("x"))
		r := st.AppendBatch(textFrames("y"), H(hClosed, "true"))
		Expect(r.StatusCode).To(BeElementOf(200, 400), "append-batch with Stream-Closed: %s", r)
		h := st.Head()
		Expect(h).NotTo(BeTrueHeader(hClosed), "Stream-Closed is not supported on append-batch")
		Expect(st.Append("z")).To(HaveStatus(200, 204), "the stream still takes appends")
	})

	ConformanceIt(MUST, Reqs{"X-4.2-01", "X-4.3-03"}, "answers 400 to producer, Stream-Seq, Stream-Closed and Stream-Record-Match headers and to a missing Content-Type, 404 to a missing stream (D5)", Profile("dsd"), func(s *S) {
		st := s.Create("batch-unsupported", CT(ctText), Text("x"))
		tail := st.Head().Get(hNextOffset)
		for _, h := range [][2]string{
			{hProducerID, "p"}, {hProducerEpoch, "0"}, {hProducerSeq, "0"},
			{hSeq, "a"}, {hClosed, "true"}, {"Stream-Record-Match", "0"},
		} {
			Expect(st.AppendBatch(textFrames("y"), H(h[0], h[1]))).To(HaveStatus(400), "with %s", h[0])
			Expect(st.Head()).To(HaveHeader(hNextOffset, tail), "with %s: nothing committed", h[0])
		}
		Expect(st.AppendBatch(textFrames("y"), NoCT())).To(HaveStatus(400), "without Content-Type")
		Expect(st.Head()).To(HaveHeader(hNextOffset, tail))
		Expect(s.Stream("batch-missing").AppendBatch(textFrames("y"))).To(HaveStatus(404))
	})

	ConformanceIt(MAY, Reqs{"X-4.1-05"}, "accepts 512 frames and answers 413 to 513, committing nothing (D5)", Profile("dsd"), func(s *S) {
		st := s.Create("batch-512", CT(ctOctets))
		frames := make([][]byte, 513)
		for i := range frames {
			frames[i] = []byte{byte(i)}
		}
		tail := st.Head().Get(hNextOffset)
		Expect(st.AppendBatch(batchBody(frames...))).To(HaveStatus(413))
		Expect(st.Head()).To(HaveHeader(hNextOffset, tail))
		acks := decodeAcks(st.AppendBatch(batchBody(frames[:512]...)), 512)
		Expect(acks[511].ok()).To(BeTrue())
		Expect(st.Head()).To(HaveHeader(hNextOffset, acks[511].NextOffset))
	})

	ConformanceIt(MAY, Reqs{"X-4.1-05"}, "answers 413 to an append-batch body over 32 MiB (D5)", Profile("dsd"), func(s *S) {
		st := s.Create("batch-32mib", CT(ctOctets))
		tail := st.Head().Get(hNextOffset)
		body := make([]byte, 4+32<<20) // one frame of 32 MiB: the body is 4 bytes over
		binary.BigEndian.PutUint32(body, 32<<20)
		Expect(st.AppendBatch(body)).To(HaveStatus(413))
		Expect(st.Head()).To(HaveHeader(hNextOffset, tail))
	})

	ConformanceIt(MUST, Reqs{"X-4.3-02"}, "acknowledges with status 204, stream_next_offset as a string token, and record ranges on JSON streams (D5)", Profile("dsd"), func(s *S) {
		st := s.Create("batch-ack-shape", CT(ctText))
		acks := decodeAcks(st.AppendBatch(textFrames("a")), 1)
		Expect(acks[0].Status).To(Equal(204))
		Expect(string(acks[0].Fields["stream_next_offset"])).To(HavePrefix(`"`), "a JSON string (D2)")

		js := s.Create("batch-ack-records", CT(ctJSON))
		acks = decodeAcks(js.AppendBatch(textFrames(`1`, `[2,3]`, `{`, `4`)), 4)
		want := [][2]string{{"0", "1"}, {"1", "3"}, {"3", "3"}, {"3", "4"}}
		for i, a := range acks {
			Expect(string(a.Fields["stream_record_start"])).To(Equal(want[i][0]), "ack %d stream_record_start: %v", i, a.Fields)
			Expect(string(a.Fields["stream_record_next"])).To(Equal(want[i][1]), "ack %d stream_record_next: %v", i, a.Fields)
		}
	})

	ConformanceIt(MUST, Reqs{"X-4.4-03", "X-4-02", "X-3.2-04"}, "shows each batch frame as its own bootstrap part", Ext("bootstrap"), func(s *S) {
		st := s.Create("batch-bootstrap", CT(ctOctets))
		frames := [][]byte{binaryBlob(10, 250), []byte("\r\n--"), binaryBlob(300, 1)}
		acks := decodeAcks(st.AppendBatch(batchBody(frames...)), 3)
		b := st.MustBootstrap()
		Expect(b.Resp).To(HaveHeader(hNextOffset, acks[2].NextOffset))
		Expect(b.Parts).To(HaveLen(4))
		for i, f := range frames {
			Expect(b.Parts[i+1].Body).To(Equal(f), "frame %d", i)
		}
	})

	ConformanceIt(MUST, Reqs{"X-4-02", "X-4.4-03", "X-2.1-02"}, "ends every frame at a message boundary: a snapshot is accepted at each ack offset", Ext("snapshot"), func(s *S) {
		st := s.Create("batch-snapshot", CT(ctText))
		for i, o := range st.mustBatch("a", "b", "c") {
			st.MustPublishSnapshot(o, ctText, []byte{'0' + byte(i)})
			Expect(st.MustLatestSnapshot()).To(Equal(o))
		}
	})
})
