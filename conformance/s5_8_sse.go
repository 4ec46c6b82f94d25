package conformance

import (
	"encoding/base64"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// sseCatchUp opens SSE at offset, checks the 200, and reads until a control event with
// upToDate: true.
func (st *Stream) sseCatchUp(offset string, opts ...Opt) ([]Event, *SSEConn) {
	ginkgo.GinkgoHelper()
	c := st.SSE(offset, opts...)
	Expect(c.Resp).To(HaveStatus(200))
	evs := c.Collect(st.s, st.s.sseBudget(), UntilUpToDateControl)
	return evs, c
}

// lastControl decodes the last control event of evs.
func lastControl(evs []Event) Control {
	ginkgo.GinkgoHelper()
	cs := Controls(evs)
	Expect(cs).NotTo(BeEmpty(), "no control event in %v", evs)
	return cs[len(cs)-1]
}

// decodeBase64Data joins base64 data lines (stripping CR/LF, §5.8) and decodes them.
func decodeBase64Data(data string) []byte {
	ginkgo.GinkgoHelper()
	joined := strings.NewReplacer("\n", "", "\r", "").Replace(data)
	Expect(len(joined)%4).To(Equal(0), "base64 payload %q: length is not a multiple of 4", joined)
	b, err := base64.StdEncoding.DecodeString(joined)
	Expect(err).NotTo(HaveOccurred(), "base64 payload %q", joined)
	return b
}

// sseLine matches the lines an SSE body may hold (§5.8 framing, B-5.8-08).
var sseLine = regexp.MustCompile(`^(event: (data|control)|data:.*|:.*|id:.*|retry:.*)?$`)

// Spec: base protocol §5.8 (digest §12), GET {stream}?offset=&live=sse.
var _ = Section("5.8", "5.8 SSE", func() {
	ConformanceIt(MUST, Reqs{"B-5.8-01"}, "rejects SSE without offset with 400", func(s *S) {
		st := s.Create("sse-no-offset", CT(ctText), Text("data"))
		c := st.SSE("")
		Expect(c.Resp).To(HaveStatus(400))
	})

	ConformanceIt(MUST, Reqs{"B-5.8-01"}, "answers text/event-stream without Content-Length and with Cache-Control no-cache", func(s *S) {
		st := s.Create("sse-headers", CT(ctText), Text("data"))
		c := st.SSE(offsetStart)
		Expect(c.Resp).To(HaveStatus(200))
		Expect(c.Resp).To(HaveHeader(hContentType, ctEventStream))
		Expect(c.Resp).To(HaveNoHeader("Content-Length"))
		Expect(c.Resp.ContentLength).To(Equal(int64(-1)))
		Expect(c.Resp).To(HaveHeader(hCacheControl, ContainSubstring("no-cache")))
	})

	ConformanceIt(MUST, Reqs{"B-5.8-10", "B-5.8-05", "B-5.8-11"}, "sends one append as one data event followed by an up-to-date control event with the tail and a cursor", func(s *S) {
		st := s.Create("sse-one", CT(ctText))
		tail := st.MustAppend("hello")
		evs, _ := st.sseCatchUp(offsetStart)
		Expect(evs).To(HaveLen(2), "events: %v", evs)
		Expect(evs[0]).To(Equal(Event{Type: "data", Data: "hello"}))
		c := lastControl(evs)
		Expect(c.NextOffset).To(Equal(tail))
		Expect(c.UpToDate).To(BeTrue())
		Expect(c.HasCursor).To(BeTrue(), "control %s has no streamCursor", evs[1].Data)
		Expect(c.Cursor).To(MatchRegexp(`^[0-9]+$`))
		Expect(c.Closed).To(BeFalse())
	})

	ConformanceIt(MUST, Reqs{"B-5.8-05", "B-5.8-10"}, "follows every data event with a control event, with increasing offsets", func(s *S) {
		st := s.Create("sse-pairs", CT(ctText))
		var tails []string
		for _, chunk := range []string{"a", "b", "c"} {
			tails = append(tails, st.MustAppend(chunk))
		}
		evs, _ := st.sseCatchUp(offsetStart)
		var prev string
		seenData := 0
		for i, ev := range evs {
			if ev.Type != "data" {
				continue
			}
			seenData++
			Expect(i+1).To(BeNumerically("<", len(evs)), "data event %d is not followed by any event", seenData)
			Expect(evs[i+1].Type).To(Equal("control"), "data event %d is followed by %q, not a control event", seenData, evs[i+1].Type)
			c := Controls(evs[i+1 : i+2])[0]
			Expect(c.NextOffset).To(SortAfter(prev))
			prev = c.NextOffset
		}
		Expect(strings.Join(DataEvents(evs), "")).To(Equal("abc"))
		Expect(lastControl(evs).NextOffset).To(Equal(tails[2]))
	})

	ConformanceIt(MUST, Reqs{"B-5.8-10", "B-5.6-03"}, "sends an up-to-date control event with the real start offset for an empty stream", func(s *S) {
		st := s.Create("sse-empty", CT(ctText))
		tail := st.Head().Get(hNextOffset)
		evs, _ := st.sseCatchUp(offsetStart)
		Expect(DataEvents(evs)).To(BeEmpty())
		c := lastControl(evs)
		Expect(c.NextOffset).To(Equal(tail))
		Expect(c.NextOffset).To(BeOffset())
	})

	ConformanceIt(MUST, Reqs{"B-5.8-08"}, "frames events as 'event: data|control' and data: lines, control JSON on one line, a blank line after each event", func(s *S) {
		st := s.Create("sse-framing", CT(ctText))
		st.MustAppend("line1\nline2")
		_, c := st.sseCatchUp(offsetStart)
		raw := string(c.Raw())
		lines := regexp.MustCompile(`\r\n|\r|\n`).Split(raw, -1)
		for _, l := range lines {
			Expect(l).To(MatchRegexp(sseLine.String()), "unexpected SSE line %q", l)
		}
		Expect(raw).To(MatchRegexp(`event: data\r?\ndata:line1\r?\ndata:line2\r?\n\r?\n`))
		Expect(raw).To(MatchRegexp(`event: control\r?\ndata:\{[^\r\n]*\}\r?\n\r?\n`))
	})

	ConformanceIt(MUST, Reqs{"B-5.8-09", "B-5.8-03"}, "splits text payloads on CRLF, CR and LF into data lines of one event", func(s *S) {
		st := s.Create("sse-newlines", CT(ctText))
		st.MustAppend("a\nb\r\nc\rd")
		evs, _ := st.sseCatchUp(offsetStart)
		Expect(DataEvents(evs)).To(Equal([]string{"a\nb\nc\nd"}))
	})

	ConformanceIt(MUST, Reqs{"B-5.8-09"}, "keeps embedded event boundaries inside one data event (CRLF, LF and CR injection)", func(s *S) {
		for _, nl := range []string{"\r\n", "\n", "\r"} {
			st := s.Create("sse-inject", CT(ctText))
			payload := "safe" + nl + nl + "event: control" + nl + `data:{"streamNextOffset":"evil","upToDate":true}` + nl + nl + "tail"
			tail := st.MustAppend(payload)
			evs, _ := st.sseCatchUp(offsetStart)
			Expect(DataEvents(evs)).To(HaveLen(1), "newline %q: events %v", nl, evs)
			cs := Controls(evs)
			Expect(cs[0].NextOffset).To(Equal(tail), "newline %q: the first control event must be the server's", nl)
		}
	})

	ConformanceIt(MUST, Reqs{"B-5.8-03", "B-5.8-09"}, "preserves a leading space of a payload line", func(s *S) {
		st := s.Create("sse-space", CT(ctText))
		st.MustAppend(" indented\n  twice")
		evs, _ := st.sseCatchUp(offsetStart)
		Expect(DataEvents(evs)).To(Equal([]string{" indented\n  twice"}))
	})

	ConformanceIt(MUST, Reqs{"B-5.8-04", "B-9.1-04"}, "sends JSON stream data as a JSON array of the messages", func(s *S) {
		st := s.Create("sse-json", CT(ctJSON))
		st.MustAppend(`{"id":1,"message":"hello"}`)
		evs, c := st.sseCatchUp(offsetStart)
		Expect(c.Resp).To(HaveNoHeader(hSSEEncoding))
		data := DataEvents(evs)
		Expect(data).To(HaveLen(1))
		var msgs []map[string]any
		Expect(json.Unmarshal([]byte(data[0]), &msgs)).To(Succeed(), "data %q is not a JSON array", data[0])
		Expect(msgs).To(Equal([]map[string]any{{"id": float64(1), "message": "hello"}}))
	})

	ConformanceIt(MUST, Reqs{"B-5.8-09", "B-5.8-04"}, "keeps JSON strings with embedded newlines intact", func(s *S) {
		st := s.Create("sse-json-nl", CT(ctJSON))
		st.MustAppend(`{"text":"line1\nline2\r\nevent: control"}`)
		evs, _ := st.sseCatchUp(offsetStart)
		data := DataEvents(evs)
		Expect(data).To(HaveLen(1))
		var msgs []map[string]string
		Expect(json.Unmarshal([]byte(data[0]), &msgs)).To(Succeed())
		Expect(msgs).To(Equal([]map[string]string{{"text": "line1\nline2\r\nevent: control"}}))
	})

	ConformanceIt(MUST, Reqs{"B-5.8-02", "B-5.8-03", "X-7-01"}, "base64-encodes binary data events and says so in stream-sse-data-encoding", func(s *S) {
		st := s.Create("sse-b64", CT(ctOctets))
		payload := []byte{0x00, 0x01, 0x0a, 0x0d, 0x20, 0xfe, 0xff, 'e', 'v', 'e', 'n', 't'}
		Expect(st.AppendBytes(payload)).To(HaveStatus(204))
		evs, c := st.sseCatchUp(offsetStart)
		Expect(c.Resp).To(HaveHeader(hSSEEncoding, "base64"))
		data := DataEvents(evs)
		Expect(data).To(HaveLen(1))
		Expect(decodeBase64Data(data[0])).To(Equal(payload))
	})

	ConformanceIt(MUST, Reqs{"B-5.8-03"}, "never encodes control events", func(s *S) {
		st := s.Create("sse-b64-ctl", CT(ctOctets))
		tail := st.Append("abc").Get(hNextOffset)
		evs, _ := st.sseCatchUp(offsetStart)
		c := lastControl(evs)
		Expect(c.NextOffset).To(Equal(tail))
	})

	ConformanceIt(MUST, Reqs{"B-5.8-02"}, "base64-encodes every non-text type and no text type", func(s *S) {
		for ct, encoded := range map[string]bool{
			ctText: false, "text/markdown": false, ctJSON: false,
			ctOctets: true, "application/x-protobuf": true, "image/png": true, "application/ndjson": true,
		} {
			st := s.Create("sse-enc", CT(ct))
			Expect(st.AppendBytes([]byte(`{"k":"v"}`))).To(HaveStatus(204), "append to %s", ct)
			_, c := st.sseCatchUp(offsetStart)
			if encoded {
				Expect(c.Resp).To(HaveHeader(hSSEEncoding, "base64"), "content type %s", ct)
			} else {
				Expect(c.Resp).To(HaveNoHeader(hSSEEncoding), "content type %s", ct)
			}
			c.Close()
		}
	})

	ConformanceIt(MUST, Reqs{"B-5.8-03", "B-9-01"}, "round-trips every byte value through base64 SSE", func(s *S) {
		st := s.Create("sse-b64-all", CT(ctOctets))
		all := make([]byte, 256)
		for i := range all {
			all[i] = byte(i)
		}
		Expect(st.AppendBytes(all)).To(HaveStatus(204))
		evs, _ := st.sseCatchUp(offsetStart)
		var got []byte
		for _, d := range DataEvents(evs) {
			got = append(got, decodeBase64Data(d)...)
		}
		Expect(got).To(Equal(all))
	})

	ConformanceIt(MUST, Reqs{"B-5.8-06", "B-5.8-11", "B-5.7-07"}, "ends with a control event carrying streamClosed and no cursor, then closes the connection", func(s *S) {
		st := s.Create("sse-closed", CT(ctText))
		st.MustAppend("final")
		tail := st.MustClose().Get(hNextOffset)
		c := st.SSE(offsetStart)
		Expect(c.Resp).To(HaveStatus(200))
		evs := c.CollectToEnd(s, s.sseBudget())
		Expect(strings.Join(DataEvents(evs), "")).To(Equal("final"))
		Expect(evs[len(evs)-1].Type).To(Equal("control"), "the last event must be a control event: %v", evs)
		last := lastControl(evs)
		Expect(last.Closed).To(BeTrue())
		Expect(last.NextOffset).To(Equal(tail))
		Expect(last.HasCursor).To(BeFalse(), "the closing control event has no streamCursor: %v", last.Fields)
	})

	ConformanceIt(MUST, Reqs{"B-5.8-06", "B-8-07"}, "answers SSE at a closed stream's tail with one closed, up-to-date control event, then closes", func(s *S) {
		st := s.Create("sse-closed-tail", CT(ctText))
		st.MustAppend("x")
		tail := st.MustClose().Get(hNextOffset)
		c := st.SSE(tail)
		Expect(c.Resp).To(HaveStatus(200))
		evs := c.CollectToEnd(s, s.sseBudget())
		Expect(evs).To(HaveLen(1), "events: %v", evs)
		ctl := lastControl(evs)
		Expect(ctl.Closed).To(BeTrue())
		Expect(ctl.NextOffset).To(Equal(tail))
		// §5.8 lets upToDate be omitted alongside streamClosed; it must not be false.
		Expect(ctl.Fields).NotTo(HaveKeyWithValue("upToDate", json.RawMessage("false")))
	})

	ConformanceIt(MUST, Reqs{"B-5.8-06"}, "sends upToDate: true in the control event at a closed stream's tail (A-19)", Profile("dsd"), func(s *S) {
		st := s.Create("sse-closed-utd", CT(ctText))
		tail := st.MustClose().Get(hNextOffset)
		c := st.SSE(tail)
		evs := c.CollectToEnd(s, s.sseBudget())
		Expect(evs).To(HaveLen(1), "events: %v", evs)
		Expect(lastControl(evs).UpToDate).To(BeTrue())
	})

	ConformanceIt(MUST, Reqs{"B-5.8-10", "B-5.8-05"}, "delivers an append to a live SSE reader at the tail", func(s *S) {
		st := s.Create("sse-live", CT(ctText))
		tail0 := st.MustAppend("old")
		_, c := st.sseCatchUp(tail0)
		tail := st.MustAppend("new")
		evs := c.Collect(s, s.sseBudget(), func(evs []Event) bool {
			return len(DataEvents(evs)) > 0 && evs[len(evs)-1].Type == "control"
		})
		Expect(DataEvents(evs)).To(Equal([]string{"new"}))
		Expect(lastControl(evs).NextOffset).To(Equal(tail))
	})

	ConformanceIt(MUST, Reqs{"B-5.8-11", "B-5.8-06"}, "delivers an append-and-close to a live reader before the closing control event", func(s *S) {
		st := s.Create("sse-final", CT(ctText))
		tail0 := st.MustAppend("a")
		_, c := st.sseCatchUp(tail0)
		r := st.Append("final", H(hClosed, "true"))
		Expect(r).To(HaveStatus(204))
		evs := c.CollectToEnd(s, s.sseBudget())
		Expect(strings.Join(DataEvents(evs), "")).To(Equal("final"))
		last := lastControl(evs)
		Expect(last.Closed).To(BeTrue())
		Expect(last.NextOffset).To(Equal(r.Get(hNextOffset)))
		idx := -1
		for i, ev := range evs {
			if ev.Type == "data" {
				idx = i
			}
		}
		Expect(idx).To(BeNumerically("<", len(evs)-1), "the data must come before the closing control event")
	})

	ConformanceIt(MUST, Reqs{"B-5.8-11", "B-10-07"}, "answers an echoed cursor with a strictly greater streamCursor", func(s *S) {
		st := s.Create("sse-cursor", CT(ctText), Text("x"))
		evs, c := st.sseCatchUp(offsetStart)
		c.Close()
		first := lastControl(evs)
		n, err := strconv.ParseInt(first.Cursor, 10, 64)
		Expect(err).NotTo(HaveOccurred(), "streamCursor %q", first.Cursor)
		evs, _ = st.sseCatchUp(offsetStart, Q("cursor", first.Cursor))
		Expect(parseCursor(lastControl(evs).Cursor)).To(BeNumerically(">", n))
	})

	ConformanceIt(MUST, Reqs{"B-5.8-10", "B-5.8-07"}, "resumes from the last streamNextOffset with only the newer data", func(s *S) {
		st := s.Create("sse-resume", CT(ctText))
		st.MustAppend("one")
		evs, c := st.sseCatchUp(offsetStart)
		c.Close()
		last := lastControl(evs).NextOffset
		st.MustAppend("two")
		evs, _ = st.sseCatchUp(last)
		Expect(DataEvents(evs)).To(Equal([]string{"two"}))
	})

	ConformanceIt(MUST, Reqs{"B-5.8-02", "B-5.8-10"}, "never ends a text data event inside a UTF-8 sequence: the control offset stops before it and it goes out with the bytes that complete it (D9)", Profile("dsd"), func(s *S) {
		st := s.Create("sse-utf8", CT(ctText))
		before := st.MustAppend("caf\xc3")
		evs, c := st.sseCatchUp(offsetStart)
		Expect(strings.Join(DataEvents(evs), "")).To(Equal("caf"), "the incomplete C3 waits")
		held := lastControl(evs).NextOffset
		Expect(held).NotTo(Equal(before), "the control offset stops before the held byte")
		Expect(st.Read(held)).To(HaveBody("\xc3"), "a read from the control offset starts with the held byte")
		after := st.MustAppend("\xa9!")
		evs = c.Collect(s, s.sseBudget(), func(evs []Event) bool {
			cs := Controls(evs)
			return len(cs) > 0 && cs[len(cs)-1].NextOffset == after
		})
		c.Close()
		Expect(strings.Join(DataEvents(evs), "")).To(Equal("é!"), "the held byte goes out with the bytes that complete it")
		resumed, r := st.sseCatchUp(held)
		r.Close()
		Expect(strings.Join(DataEvents(resumed), "")).To(Equal("é!"), "SSE resumed from the held control offset")
		for _, d := range append(DataEvents(evs), DataEvents(resumed)...) {
			Expect(utf8.ValidString(d)).To(BeTrue(), "data event %q is not whole UTF-8", d)
		}
	})

	ConformanceIt(MUST, Reqs{"B-5.8-10", "B-5.8-03"}, "sends each append of a binary stream as its own base64 data event, each followed by its control event (D9)", Profile("dsd"), func(s *S) {
		st := s.Create("sse-binary-units", CT(ctOctets))
		msgs := [][]byte{{0, 1, 2}, {0xff}, binaryBlob(70, 3)}
		var offs []string
		for _, m := range msgs {
			r := st.AppendBytes(m)
			Expect(r).To(HaveStatus(200, 204))
			offs = append(offs, r.Get(hNextOffset))
		}
		evs, c := st.sseCatchUp(offsetStart)
		c.Close()
		var got [][]byte
		var after []string
		for i, e := range evs {
			if e.Type != "data" {
				continue
			}
			got = append(got, decodeBase64Data(e.Data))
			Expect(i+1).To(BeNumerically("<", len(evs)), "data event %d is the last event", len(got))
			ctl, err := ParseControl(evs[i+1])
			Expect(err).NotTo(HaveOccurred(), "data event %d is not followed by its control event", len(got))
			after = append(after, ctl.NextOffset)
		}
		Expect(got).To(Equal(msgs), "one data event per append")
		Expect(after).To(Equal(offs), "each control event names the offset after its append")
	})

	ConformanceIt(MUST, Reqs{"B-5.8-01"}, "answers SSE on a missing stream with 404", func(s *S) {
		c := s.Stream("sse-missing").SSE(offsetStart)
		Expect(c.Resp).To(HaveStatus(404))
	})
})
