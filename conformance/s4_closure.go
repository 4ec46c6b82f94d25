package conformance

import (
	. "github.com/onsi/gomega"
)

// Spec: base protocol §4 and §4.1 (digest §2), the stream model and closure.
var _ = Section("4.1", "4.1 Stream closure", func() {
	ConformanceIt(MUST, Reqs{"B-4.1-01"}, "treats Stream-Closed values other than true as absent on append", func(s *S) {
		st := s.Create("closed-values", CT(ctText))
		for _, v := range []string{"false", "yes", "1", ""} {
			r := st.Append("x", H(hClosed, v))
			Expect(r).To(HaveStatus(204), "Stream-Closed: %q", v)
			Expect(r).To(HaveNoHeader(hClosed), "Stream-Closed: %q must not close the stream", v)
		}
		Expect(st.Head()).To(HaveNoHeader(hClosed))
		Expect(st.Read(offsetStart)).To(HaveBody("xxxx"))
	})

	ConformanceIt(MUST, Reqs{"B-4.1-01"}, "treats Stream-Closed: false on PUT as absent", func(s *S) {
		st := s.Stream("closed-false-put")
		Expect(st.Put(CT(ctText), H(hClosed, "false"))).To(HaveStatus(201))
		Expect(st.Head()).To(HaveNoHeader(hClosed))
	})

	ConformanceIt(MUST, Reqs{"B-4.1-01"}, "compares Stream-Closed: true case-insensitively", func(s *S) {
		st := s.Create("closed-case", CT(ctText))
		r := st.Close(H(hClosed, "TRUE"))
		Expect(r).To(HaveStatus(204))
		Expect(st.Head()).To(BeTrueHeader(hClosed))
	})

	ConformanceIt(MUST, Reqs{"B-4.1-01"}, "always sends the value true in Stream-Closed", func(s *S) {
		st := s.Create("closed-value", CT(ctText))
		Expect(st.Close()).To(HaveHeader(hClosed, "true"))
		Expect(st.Head()).To(HaveHeader(hClosed, "true"))
		Expect(st.Read(offsetStart)).To(HaveHeader(hClosed, "true"))
	})

	ConformanceIt(MUST, Reqs{"B-4-04", "B-5.1-02"}, "never reopens a closed stream", func(s *S) {
		st := s.Create("no-reopen", CT(ctText))
		st.MustClose()
		Expect(st.Put(CT(ctText))).To(HaveStatus(409))
		Expect(st.Append("x", H(hClosed, "false"))).To(HaveStatus(409))
		Expect(st.Head()).To(BeTrueHeader(hClosed))
	})

	ConformanceIt(MUST, Reqs{"B-4-01", "B-8-01"}, "never changes the bytes at an offset as the stream grows", func(s *S) {
		st := s.Create("immutable", CT(ctText))
		o1 := st.MustAppend("alpha ")
		st.MustAppend("beta ")
		first := st.Read(o1).Text()
		st.MustAppend("gamma")
		Expect(st.Read(o1).Text()).To(Equal(first + "gamma"))
		Expect(st.Read(offsetStart)).To(HaveBody("alpha beta gamma"))
	})

	ConformanceIt(MUST, Reqs{"B-4-01"}, "keeps the content type fixed at creation", func(s *S) {
		st := s.Create("fixed-ct", CT(ctJSON))
		Expect(st.Put(CT(ctText))).To(HaveStatus(409))
		Expect(st.Append("x", CT(ctText))).To(HaveStatus(409))
		Expect(st.Head()).To(HaveMediaType(ctJSON))
	})
})
