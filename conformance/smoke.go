package conformance

import (
	. "github.com/onsi/gomega"
)

var _ = Section("smoke", "Smoke", func() {
	ConformanceIt(MUST, Reqs{"B-5.1-01", "B-5.2-09", "B-5.6-05"}, "creates a stream, appends to it and reads the data back", Label("smoke"), func(s *S) {
		st := s.Stream("smoke")
		created := st.MustCreate(CT(ctText))
		Expect(created.Get(hNextOffset)).To(BeOffset())
		tail := st.MustAppend("hello")
		Expect(tail).To(SortAfter(created.Get(hNextOffset)))
		r := st.Read(offsetStart)
		Expect(r).To(HaveStatus(200))
		Expect(r).To(HaveBody("hello"))
		Expect(r).To(HaveHeader(hNextOffset, tail))
		Expect(r).To(BeTrueHeader(hUpToDate))
	})
})
