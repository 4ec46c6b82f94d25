package conformance

import (
	. "github.com/onsi/gomega"
)

// Spec: base protocol §5.4 (digest §8), DELETE {stream}.
var _ = Section("5.4", "5.4 Delete", func() {
	ConformanceIt(MUST, Reqs{"B-5.4-01"}, "deletes a stream with 204; it then answers 404 to GET, HEAD and POST", func(s *S) {
		st := s.Create("delete", CT(ctText), Text("data"))
		Expect(st.Delete()).To(HaveStatus(204))
		Expect(st.Read(offsetStart)).To(HaveStatus(404))
		Expect(st.Head()).To(HaveStatus(404))
		Expect(st.Append("more")).To(HaveStatus(404))
	})

	ConformanceIt(MUST, Reqs{"B-5.4-01"}, "answers 404 to deleting a missing stream", func(s *S) {
		Expect(s.Stream("delete-missing").Delete()).To(HaveStatus(404))
	})

	ConformanceIt(MUST, Reqs{"B-5.4-01", "B-5.3-01"}, "deletes a closed stream", func(s *S) {
		st := s.Create("delete-closed", CT(ctText))
		st.MustClose()
		Expect(st.Delete()).To(HaveStatus(204))
		Expect(st.Head()).To(HaveStatus(404))
	})

	ConformanceIt(SHOULD, Reqs{"B-4-03"}, "re-creates a deleted stream with 201 and none of the old data or closure", func(s *S) {
		st := s.Create("recreate", CT(ctText), Text("old data"))
		st.MustClose()
		Expect(st.Delete()).To(HaveStatus(204))
		Expect(st.Put(CT(ctText))).To(HaveStatus(201))
		r := st.Read(offsetStart)
		Expect(r).To(HaveStatus(200))
		Expect(r).To(HaveBody(""))
		Expect(r).To(HaveNoHeader(hClosed))
		Expect(st.Append("new")).To(HaveStatus(204))
		Expect(st.Read(offsetStart)).To(HaveBody("new"))
	})
})
