package conformance

import (
	"strings"

	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/types"
)

// BeRejected matches a *Response with a 4xx status: the extension says "reject" without
// naming the code (dsd's codes are checked by a profile:dsd spec).
func BeRejected() types.GomegaMatcher {
	return WithTransform(func(r *Response) int { return r.StatusCode }, SatisfyAll(BeNumerically(">=", 400), BeNumerically("<", 500)))
}

// Spec: extension §2.2 "Retention Effect" (and base protocol §4: reads before the retained
// range answer 410).
var _ = Section("x2", "X2.2 Retention", Ext("snapshot"), func() {
	ConformanceIt(MUST, Reqs{"X-2.2-10", "B-4-02", "B-5.6-02"}, "answers 410 below the retained offset in catch-up, long-poll and SSE", func(s *S) {
		st := s.Create("ret-gone", CT(ctText))
		off := st.appendAll("a|", "b|", "c|")
		st.MustPublishSnapshot(off[2], ctText, []byte("a|b|"))
		st.MustRetain(off[2])
		for i, o := range off[:2] {
			Expect(st.Read(o)).To(HaveStatus(410), "catch-up at offset %d (%q)", i, o)
			Expect(st.LongPoll(o)).To(HaveStatus(410), "long-poll at offset %d (%q)", i, o)
			c := st.SSE(o)
			Expect(c.Resp).To(HaveStatus(410), "SSE at offset %d (%q)", i, o)
			c.Close()
		}
		Expect(st.Read(off[2])).To(HaveBody("c|"), "the retained offset itself")
		Expect(st.LongPoll(off[2])).To(HaveBody("c|"))
		evs, c := st.sseCatchUp(off[2])
		c.Close()
		Expect(strings.Join(DataEvents(evs), "")).To(Equal("c|"))
	})

	ConformanceIt(MUST, Reqs{"X-2.2-10", "X-3.4-03"}, "answers offset=-1 with 410 in every mode once retention has advanced (-1 is before the earliest retained offset, §3.4)", func(s *S) {
		st := s.Create("ret-start", CT(ctText))
		off := st.appendAll("a|", "b|", "c|", "d|")
		st.MustPublishSnapshot(off[3], ctText, []byte("a|b|c|"))
		st.MustRetain(off[2])
		Expect(st.Read(offsetStart)).To(HaveStatus(410), "catch-up from -1")
		Expect(st.LongPoll(offsetStart)).To(HaveStatus(410), "long-poll from -1")
		c := st.SSE(offsetStart)
		Expect(c.Resp).To(HaveStatus(410), "SSE from -1")
		c.Close()
		all, last := st.CatchUp(off[2])
		Expect(string(all)).To(Equal("c|d|"), "catch-up from the retained offset")
		Expect(last).To(HaveHeader(hNextOffset, off[4]))
		Expect(st.Read(offsetNow)).To(HaveStatus(200), "offset=now")
	})

	ConformanceIt(MUST, Reqs{"X-2.2-10"}, "names the earliest retained offset in Stream-Next-Offset of every 410 read, -1 included (D2)", Profile("dsd"), func(s *S) {
		st := s.Create("ret-start-offset", CT(ctText))
		off := st.appendAll("a|", "b|", "c|")
		st.MustPublishSnapshot(off[2], ctText, []byte("a|b|"))
		st.MustRetain(off[2])
		for _, o := range []string{offsetStart, off[0], off[1]} {
			Expect(st.Read(o)).To(SatisfyAll(HaveStatus(410), HaveHeader(hNextOffset, off[2])), "catch-up from %q", o)
			Expect(st.LongPoll(o)).To(SatisfyAll(HaveStatus(410), HaveHeader(hNextOffset, off[2])), "long-poll from %q", o)
			c := st.SSE(o)
			Expect(c.Resp).To(SatisfyAll(HaveStatus(410), HaveHeader(hNextOffset, off[2])), "SSE from %q", o)
			c.Close()
		}
	})

	ConformanceIt(MUST, Reqs{"X-2.2-09"}, "rejects retention newer than the latest snapshot, or without one, and keeps every offset readable", func(s *S) {
		st := s.Create("ret-past-snapshot", CT(ctText))
		off := st.appendAll("a|", "b|", "c|")
		Expect(st.Retain(off[1])).To(BeRejected(), "no snapshot published")
		st.MustPublishSnapshot(off[1], ctText, []byte("a|"))
		Expect(st.Retain(off[2])).To(BeRejected(), "past the latest snapshot")
		Expect(st.Retain(off[3])).To(BeRejected(), "at the tail, past the latest snapshot")
		all, _ := st.CatchUp(offsetStart)
		Expect(string(all)).To(Equal("a|b|c|"), "nothing was trimmed")
		Expect(st.Read(off[0])).To(HaveStatus(200))
	})

	ConformanceIt(MUST, Reqs{"X-2.2-09"}, "rejects retention that moves backward and keeps the boundary", func(s *S) {
		st := s.Create("ret-backward", CT(ctText))
		off := st.appendAll("a|", "b|", "c|")
		st.MustPublishSnapshot(off[2], ctText, []byte("a|b|"))
		st.MustRetain(off[2])
		Expect(st.Retain(off[1])).To(BeRejected(), "backward")
		Expect(st.Read(off[1])).To(HaveStatus(410), "the boundary did not move back")
		Expect(st.Read(off[2])).To(HaveBody("c|"))
	})

	ConformanceIt(MUST, Reqs{"X-2.2-09"}, "rejects a retention boundary that is not an offset", func(s *S) {
		st := s.Create("ret-garbage", CT(ctText))
		off := st.appendAll("a|")
		st.MustPublishSnapshot(off[1], ctText, []byte("a|"))
		Expect(st.Retain("not-an-offset")).To(BeRejected())
		Expect(st.Read(off[0])).To(HaveStatus(200))
	})

	ConformanceIt(MUST, Reqs{"X-2.2-09", "X-2.2-10"}, "answers 400 mid-message, 409 backward or past the snapshot, 204 when repeated (D2)", Profile("dsd"), func(s *S) {
		st := s.Create("ret-d2", CT(ctText))
		st.MustAppend("hello")
		st.MustAppend("world")
		Expect(st.Retain(dsdOffset(5))).To(HaveStatus(409), "no snapshot")
		st.MustPublishSnapshot(dsdOffset(5), ctText, []byte("hello"))
		Expect(st.Retain(dsdOffset(3))).To(HaveStatus(400), "mid-message")
		Expect(st.Retain(dsdOffset(10))).To(HaveStatus(409), "past the snapshot")
		Expect(st.Retain(dsdOffset(5))).To(HaveStatus(204))
		Expect(st.Retain(dsdOffset(5))).To(HaveStatus(204), "repeating the boundary")
		Expect(st.Retain(dsdOffset(0))).To(HaveStatus(409), "backward")
		Expect(st.Read(dsdOffset(0))).To(HaveStatus(410))
	})
})
