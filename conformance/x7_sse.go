package conformance

import (
	"strings"

	"github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// sseBinary reads SSE from offset until caught up and returns the decoded bytes of the
// data events, checking Stream-SSE-Data-Encoding: base64 (extension §7).
func (st *Stream) sseBinary(offset string) []byte {
	ginkgo.GinkgoHelper()
	evs, c := st.sseCatchUp(offset)
	c.Close()
	Expect(c.Resp).To(HaveHeader(hSSEEncoding, MatchRegexp(`^(?i:base64)$`)), "binary SSE must say base64")
	var out []byte
	for _, d := range DataEvents(evs) {
		out = append(out, decodeBase64Data(d)...)
	}
	return out
}

// Spec: extension §7 (ordinary SSE compatibility) for data that came through the
// extensions' endpoints.
var _ = Section("x7", "X7 Ordinary SSE compatibility", func() {
	ConformanceIt(MUST, Reqs{"X-7-01", "X-7-02", "X-4.4-03"}, "streams batch-appended binary data over SSE as base64 with Stream-SSE-Data-Encoding: base64", Ext("append-batch"), func(s *S) {
		st := s.Create("sse-batch-binary", CT(ctOctets))
		frames := [][]byte{binaryBlob(100, 0), {0xff, 0xfe, '\n', '\r'}, binaryBlob(57, 128)}
		decodeAcks(st.AppendBatch(batchBody(frames...)), len(frames))
		var want []byte
		for _, f := range frames {
			want = append(want, f...)
		}
		Expect(st.sseBinary(offsetStart)).To(Equal(want))
	})

	ConformanceIt(MUST, Reqs{"X-7-01", "X-4.4-03"}, "sends each append-batch frame of a binary stream as its own base64 data event with its control event (D9)", Ext("append-batch"), Profile("dsd"), func(s *S) {
		st := s.Create("sse-batch-frames", CT(ctOctets))
		frames := [][]byte{binaryBlob(10, 0), {0xfe}, binaryBlob(33, 7)}
		decodeAcks(st.AppendBatch(batchBody(frames...)), len(frames))
		evs, c := st.sseCatchUp(offsetStart)
		c.Close()
		var got [][]byte
		for i, e := range evs {
			if e.Type == "data" {
				got = append(got, decodeBase64Data(e.Data))
				Expect(i + 1).To(BeNumerically("<", len(evs)))
				Expect(evs[i+1].Type).To(Equal("control"), "data event %d is followed by its control event", len(got))
			}
		}
		Expect(got).To(Equal(frames), "one data event per frame")
	})

	ConformanceIt(MUST, Reqs{"X-7-01", "X-7-02", "X-2.2-10"}, "keeps binary SSE base64 after a snapshot and retention, without snapshot bytes", Ext("snapshot"), func(s *S) {
		st := s.Create("sse-retained-binary", CT(ctOctets))
		Expect(st.AppendBytes([]byte{0, 1, 2})).To(HaveStatus(204))
		mid := st.Head().Get(hNextOffset)
		Expect(st.AppendBytes([]byte{0xfa, 0xfb, '\n'})).To(HaveStatus(204))
		st.MustPublishSnapshot(mid, "text/plain", []byte("SNAPSHOT"))
		st.MustRetain(mid)
		got := st.sseBinary(mid)
		Expect(got).To(Equal([]byte{0xfa, 0xfb, '\n'}))
		Expect(strings.Contains(string(got), "SNAPSHOT")).To(BeFalse())
	})
})
