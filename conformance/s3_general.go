package conformance

import (
	. "github.com/onsi/gomega"
)

// Spec: base protocol §3 and §11 (digest §1), general rules.
var _ = Section("3", "3 General", func() {
	ConformanceIt(MUST, Reqs{"B-3-02"}, "ignores unknown query parameters", func(s *S) {
		st := s.Create("unknown-q", CT(ctText), Text("data"))
		r := st.Get(RawQ("offset=-1&foo=bar&baz=qux"))
		Expect(r).To(HaveStatus(200))
		Expect(r).To(HaveBody("data"))
	})

	ConformanceIt(MUST, Reqs{"B-3-02"}, "accepts protocol header names in any case", func(s *S) {
		st := s.Stream("header-case")
		Expect(st.Put(RawH("content-type", ctText), RawH("stream-ttl", "3600"))).To(HaveStatus(201))
		Expect(st.Head()).To(HaveHeader(hTTL, "3600"))
		Expect(st.Post(RawH("CONTENT-TYPE", ctText), RawH("stream-seq", "5"), Text("a"))).To(HaveStatus(204))
		Expect(st.Post(RawH("content-type", ctText), RawH("STREAM-SEQ", "4"), Text("b"))).To(HaveStatus(409), "a lower Stream-Seq sent as STREAM-SEQ")
		Expect(st.Post(RawH("stream-closed", "true"))).To(HaveStatus(204))
		Expect(st.Head()).To(BeTrueHeader(hClosed))
	})

	ConformanceIt(MUST, Reqs{"B-6-01"}, "reserves __ds: routed ahead of streams, never a stream (A-32)", Profile("dsd"), func(s *S) {
		st := s.StreamNamed("__ds")
		r := st.Put(CT(ctText))
		Expect(r).To(HaveStatus(404, 405, 501), "PUT {root}__ds creates nothing")
		Expect(r).To(HaveMediaType(ctJSON))
		Expect(st.Head()).NotTo(HaveStatus(200))
		Expect(s.Do("GET", st.URL+"/subscriptions/x")).To(HaveStatus(404, 501), "no subscription x")
		Expect(s.Do("PUT", st.URL+"/no-such-api", CT(ctText))).To(HaveStatus(404, 405, 501), "unknown __ds routes are not streams")
	})
})
