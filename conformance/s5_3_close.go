package conformance

import (
	. "github.com/onsi/gomega"
)

// Spec: base protocol §5.3 (digest §7), close = POST with Stream-Closed: true.
var _ = Section("5.3", "5.3 Close", func() {
	ConformanceIt(MUST, Reqs{"B-5.3-01", "B-5.2-06"}, "closes with an empty POST: 204, Stream-Closed and the unchanged tail", func(s *S) {
		st := s.Create("close", CT(ctText))
		tail := st.MustAppend("data")
		r := st.Close()
		Expect(r).To(HaveStatus(204))
		Expect(r).To(BeTrueHeader(hClosed))
		Expect(r).To(HaveHeader(hNextOffset, tail))
		h := st.Head()
		Expect(h).To(BeTrueHeader(hClosed))
		Expect(h).To(HaveHeader(hNextOffset, tail))
	})

	ConformanceIt(MUST, Reqs{"B-5.3-01", "B-5.2-07", "B-4-04"}, "answers a repeated close with 204, Stream-Closed and the same offset", func(s *S) {
		st := s.Create("close-twice", CT(ctText))
		first := st.MustClose()
		again := st.Close()
		Expect(again).To(HaveStatus(204))
		Expect(again).To(BeTrueHeader(hClosed))
		Expect(again).To(HaveHeader(hNextOffset, first.Get(hNextOffset)))
	})

	ConformanceIt(MUST, Reqs{"B-5.3-01"}, "answers 404 to closing a missing stream", func(s *S) {
		st := s.Stream("close-missing")
		Expect(st.Close()).To(HaveStatus(404))
		Expect(st.Head()).To(HaveStatus(404))
	})

	ConformanceIt(MUST, Reqs{"B-5.2-06", "B-4-04", "B-5.2-09"}, "appends and closes atomically with a body and Stream-Closed: true", func(s *S) {
		st := s.Create("append-close", CT(ctText))
		st.MustAppend("a")
		r := st.Append("b", H(hClosed, "true"))
		Expect(r).To(HaveStatus(204))
		Expect(r).To(BeTrueHeader(hClosed))
		read := st.Read(offsetStart)
		Expect(read).To(HaveBody("ab"))
		Expect(read).To(BeTrueHeader(hClosed))
		Expect(read).To(HaveHeader(hNextOffset, r.Get(hNextOffset)))
	})

	ConformanceIt(MUST, Reqs{"B-4-04", "B-5.6-06"}, "keeps the data of a closed stream readable", func(s *S) {
		st := s.Create("closed-read", CT(ctText))
		mid := st.MustAppend("one ")
		st.MustAppend("two")
		st.MustClose()
		Expect(st.Read(offsetStart)).To(HaveBody("one two"))
		Expect(st.Read(mid)).To(HaveBody("two"))
	})
})
