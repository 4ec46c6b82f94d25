package conformance

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// longPollAll reads from offset with long-polls until an up-to-date 200 at the tail and
// returns the concatenated bodies (one body per response, for JSON callers).
func (st *Stream) longPollAll(offset, tail string) [][]byte {
	ginkgo.GinkgoHelper()
	var bodies [][]byte
	for i := 0; i < 1000; i++ {
		r := st.LongPoll(offset)
		Expect(r).To(HaveStatus(200), "long-poll at %q before the tail %q", offset, tail)
		bodies = append(bodies, r.Data)
		offset = r.Get(hNextOffset)
		if offset == tail && r.Get(hUpToDate) == "true" {
			return bodies
		}
	}
	ginkgo.Fail("long-poll did not reach the tail in 1000 responses")
	return nil
}

// sseAll reads SSE from offset until caught up and returns the data of each data event.
func (st *Stream) sseAll(offset string) []string {
	ginkgo.GinkgoHelper()
	evs, c := st.sseCatchUp(offset)
	c.Close()
	return DataEvents(evs)
}

// compactMessages normalizes JSON messages (whitespace only) for comparison.
func compactMessages(msgs []json.RawMessage) []string {
	ginkgo.GinkgoHelper()
	out := make([]string, len(msgs))
	for i, m := range msgs {
		var b bytes.Buffer
		Expect(json.Compact(&b, m)).To(Succeed())
		out[i] = b.String()
	}
	return out
}

// Spec: base protocol §5.6-§5.8 together: the three read modes return the same data for
// the same range (the kit's cross-mode check, like fstest's).
var _ = Section("5.x", "5.x Read-mode equivalence", func() {
	ConformanceIt(MUST, Reqs{"B-5.6-01", "B-5.7-02", "B-5.8-09", "B-5.8-03"}, "returns the same text through catch-up, long-poll and SSE", func(s *S) {
		st := s.Create("eq-text", CT(ctText))
		chunks := []string{"plain", "two\nlines", "\n", "data: not a field\n\nevent: control", " leading space", "ünïcödé ☃", "trailing newline\n"}
		for _, c := range chunks {
			st.MustAppend(c)
		}
		want := strings.Join(chunks, "")
		tail := st.Head().Get(hNextOffset)

		catchUp, _ := st.CatchUp(offsetStart)
		Expect(string(catchUp)).To(Equal(want), "catch-up")
		Expect(string(bytes.Join(st.longPollAll(offsetStart, tail), nil))).To(Equal(want), "long-poll")
		Expect(strings.Join(st.sseAll(offsetStart), "")).To(Equal(want), "SSE")
	})

	ConformanceIt(MUST, Reqs{"B-5.6-01", "B-5.7-02", "B-5.8-02", "B-5.8-03"}, "returns the same bytes through catch-up, long-poll and base64 SSE", func(s *S) {
		st := s.Create("eq-binary", CT(ctOctets))
		var want []byte
		for i := 0; i < 5; i++ {
			chunk := make([]byte, 1+i*97)
			for j := range chunk {
				chunk[j] = byte(i*31 + j*7)
			}
			Expect(st.AppendBytes(chunk)).To(HaveStatus(204))
			want = append(want, chunk...)
		}
		tail := st.Head().Get(hNextOffset)

		catchUp, _ := st.CatchUp(offsetStart)
		Expect(catchUp).To(Equal(want), "catch-up")
		Expect(bytes.Join(st.longPollAll(offsetStart, tail), nil)).To(Equal(want), "long-poll")
		var viaSSE []byte
		for _, d := range st.sseAll(offsetStart) {
			viaSSE = append(viaSSE, decodeBase64Data(d)...)
		}
		Expect(viaSSE).To(Equal(want), "SSE")
	})

	ConformanceIt(MUST, Reqs{"B-9.1-04", "B-5.7-02", "B-5.8-04"}, "returns the same JSON messages through catch-up, long-poll and SSE", func(s *S) {
		st := s.Create("eq-json", CT(ctJSON))
		for _, body := range []string{`{"n":1}`, `[{"n":2},{"n":3}]`, `"text with\nnewline"`, `[[1,2],[3]]`, `{"nested":{"a":[true,null]}}`} {
			st.MustAppend(body)
		}
		tail := st.Head().Get(hNextOffset)

		catchUp, _ := st.CatchUpJSON(offsetStart)
		want := compactMessages(catchUp)
		Expect(want).To(HaveLen(7))

		var lp []json.RawMessage
		for _, b := range st.longPollAll(offsetStart, tail) {
			lp = append(lp, MustJSONArray(b)...)
		}
		Expect(compactMessages(lp)).To(Equal(want), "long-poll")

		var viaSSE []json.RawMessage
		for _, d := range st.sseAll(offsetStart) {
			viaSSE = append(viaSSE, MustJSONArray([]byte(d))...)
		}
		Expect(compactMessages(viaSSE)).To(Equal(want), "SSE")
	})

	ConformanceIt(MUST, Reqs{"B-5.6-01", "B-5.7-02", "B-5.8-10"}, "returns the same suffix from a mid-stream offset in every mode", func(s *S) {
		st := s.Create("eq-suffix", CT(ctText))
		st.MustAppend("before|")
		mid := st.MustAppend("middle|")
		st.MustAppend("after")
		tail := st.Head().Get(hNextOffset)

		catchUp, _ := st.CatchUp(mid)
		Expect(string(catchUp)).To(Equal("after"))
		Expect(string(bytes.Join(st.longPollAll(mid, tail), nil))).To(Equal("after"))
		Expect(strings.Join(st.sseAll(mid), "")).To(Equal("after"))
	})
})
