package conformance

import (
	. "github.com/onsi/gomega"
)

// Spec: base protocol §5.5 (digest §9), HEAD {stream}.
var _ = Section("5.5", "5.5 Metadata", func() {
	ConformanceIt(MUST, Reqs{"B-5.5-01", "B-5.5-02"}, "answers HEAD with 200, the content type and the tail", func(s *S) {
		st := s.Create("head", CT(ctText))
		tail := st.MustAppend("hello")
		h := st.Head()
		Expect(h).To(HaveStatus(200))
		Expect(h).To(HaveHeader(hContentType, ctText))
		Expect(h).To(HaveHeader(hNextOffset, tail))
		Expect(h).To(HaveNoHeader(hClosed))
		Expect(h).To(HaveNoHeader(hTTL))
		Expect(h).To(HaveNoHeader(hExpiresAt))
	})

	ConformanceIt(MUST, Reqs{"B-5.5-01"}, "answers HEAD on a missing stream with 404", func(s *S) {
		Expect(s.Stream("head-missing").Head()).To(HaveStatus(404))
	})

	ConformanceIt(MUST, Reqs{"B-5.5-02"}, "reports Stream-Closed: true on HEAD of a closed stream", func(s *S) {
		st := s.Create("head-closed", CT(ctText))
		st.MustClose()
		Expect(st.Head()).To(BeTrueHeader(hClosed))
	})

	ConformanceIt(MUST, Reqs{"B-8-11", "B-5.5-02"}, "moves the HEAD tail forward after an append", func(s *S) {
		st := s.Create("head-tail", CT(ctText))
		before := st.Head().Get(hNextOffset)
		st.MustAppend("x")
		after := st.Head().Get(hNextOffset)
		Expect(after).To(SortAfter(before))
	})

	ConformanceIt(SHOULD, Reqs{"B-5.5-03", "B-12.7-03"}, "makes HEAD uncacheable with Cache-Control: no-store", func(s *S) {
		st := s.Create("head-cache", CT(ctText))
		Expect(st.Head()).To(HaveHeader(hCacheControl, ContainSubstring("no-store")))
	})
})
