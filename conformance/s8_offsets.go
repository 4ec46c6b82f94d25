package conformance

import (
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/gomega"
)

// Spec: base protocol §8 (digest §14), offsets and the -1 / now sentinels.
var _ = Section("8", "8 Offsets", func() {
	ConformanceIt(MUST, Reqs{"B-8-01", "B-8-11", "B-8-02", "B-8-08"}, "issues strictly increasing offsets without reserved characters or sentinels", func(s *S) {
		st := s.Stream("monotonic")
		prev := st.MustCreate(CT(ctText)).Get(hNextOffset)
		Expect(prev).To(BeOffset())
		for i := 0; i < 5; i++ {
			next := st.MustAppend(fmt.Sprintf("chunk-%d;", i))
			Expect(next).To(BeOffset())
			Expect(next).To(SortAfter(prev))
			prev = next
		}
	})

	ConformanceIt(SHOULD, Reqs{"B-8-02"}, "keeps offsets URL-safe and under 256 characters", func(s *S) {
		st := s.Create("urlsafe", CT(ctText))
		o := st.MustAppend("x")
		Expect(len(o)).To(BeNumerically("<", 256))
		Expect(o).To(MatchRegexp(`^[A-Za-z0-9._~-]+$`), "offset %q needs URL encoding", o)
	})

	ConformanceIt(MUST, Reqs{"B-8-01", "B-5.6-09"}, "resumes from each returned offset without duplicates or gaps", func(s *S) {
		st := s.Create("resume", CT(ctText))
		offset := offsetStart
		var got strings.Builder
		for _, chunk := range []string{"a", "bb", "ccc"} {
			st.MustAppend(chunk)
			r := st.Read(offset)
			Expect(r).To(HaveStatus(200))
			Expect(r).To(HaveBody(chunk))
			got.WriteString(r.Text())
			offset = r.Get(hNextOffset)
		}
		Expect(got.String()).To(Equal("abbccc"))
	})

	ConformanceIt(MUST, Reqs{"B-8-04"}, "answers offset=now with 200, no data, the tail and up-to-date", func(s *S) {
		st := s.Create("now", CT(ctText), Text("history"))
		tail := st.Read(offsetStart).Get(hNextOffset)
		r := st.Read(offsetNow)
		Expect(r).To(HaveStatus(200))
		Expect(r).To(HaveEmptyBody())
		Expect(r).To(HaveHeader(hNextOffset, tail))
		Expect(r).To(BeTrueHeader(hUpToDate))
		Expect(r).To(HaveNoHeader(hETag))
	})

	ConformanceIt(SHOULD, Reqs{"B-8-04"}, "marks offset=now responses Cache-Control: no-store", func(s *S) {
		st := s.Create("now-cache", CT(ctText), Text("x"))
		Expect(st.Read(offsetNow)).To(HaveHeader(hCacheControl, ContainSubstring("no-store")))
	})

	ConformanceIt(MUST, Reqs{"B-8-04", "B-9.1-04"}, "answers offset=now on a JSON stream with [] and application/json", func(s *S) {
		st := s.Create("now-json", CT(ctJSON), Text(`[{"a":1}]`))
		r := st.Read(offsetNow)
		Expect(r).To(HaveStatus(200))
		Expect(r).To(HaveHeader(hContentType, ctJSON))
		Expect(r).To(HaveBody("[]"))
	})

	ConformanceIt(MUST, Reqs{"B-8-04"}, "answers offset=now on an empty stream with its start offset", func(s *S) {
		st := s.Create("now-empty", CT(ctText))
		r := st.Read(offsetNow)
		Expect(r).To(HaveStatus(200))
		Expect(r).To(HaveEmptyBody())
		Expect(r).To(HaveHeader(hNextOffset, st.Head().Get(hNextOffset)))
	})

	ConformanceIt(MUST, Reqs{"B-8-04", "B-8-01"}, "resumes from the offset=now answer with only newer data", func(s *S) {
		st := s.Create("now-resume", CT(ctText), Text("old"))
		now := st.Read(offsetNow).Get(hNextOffset)
		st.MustAppend("new")
		Expect(st.Read(now)).To(HaveBody("new"))
	})

	ConformanceIt(MUST, Reqs{"B-8-05", "B-5.7-09"}, "waits on offset=now long-poll and times out with 204, up-to-date and the tail", func(s *S) {
		st := s.Create("now-lp", CT(ctText), Text("history"))
		tail := st.Head().Get(hNextOffset)
		r := st.LongPoll(offsetNow)
		Expect(r).To(HaveStatus(204))
		Expect(r).To(BeTrueHeader(hUpToDate))
		Expect(r).To(HaveHeader(hNextOffset, tail))
		Expect(r.Elapsed).To(BeNumerically(">=", s.immediate()), "offset=now long-poll must wait, not answer at once")
		st.MustAppend("next")
		Expect(st.Read(r.Get(hNextOffset))).To(HaveBody("next"))
	})

	ConformanceIt(MUST, Reqs{"B-8-05", "B-5.7-09"}, "times out offset=now long-poll on an empty stream with 204 and its start offset", func(s *S) {
		st := s.Create("now-lp-empty", CT(ctText))
		r := st.LongPoll(offsetNow)
		Expect(r).To(HaveStatus(204))
		Expect(r).To(BeTrueHeader(hUpToDate))
		Expect(r).To(HaveHeader(hNextOffset, st.Head().Get(hNextOffset)))
	})

	ConformanceIt(MUST, Reqs{"B-8-05"}, "wakes an offset=now long-poll with only the data appended while it waits", func(s *S) {
		st := s.Create("now-lp-data", CT(ctText), Text("history"))
		n := 0
		s.tryTimed(func() string {
			n++
			done := s.Async(func() *Response { return st.LongPoll(offsetNow) })
			time.Sleep(s.wakeDelay())
			body := fmt.Sprintf("fresh-%d", n)
			st.MustAppend(body)
			r := s.Await(done)
			if r.StatusCode == 204 {
				return fmt.Sprintf("the long-poll timed out (after %s) instead of waking", r.Elapsed.Round(time.Millisecond))
			}
			Expect(r).To(HaveStatus(200))
			Expect(r).To(HaveBody(body))
			return ""
		})
	})

	ConformanceIt(MUST, Reqs{"B-8-06", "B-5.8-10"}, "starts offset=now SSE at the tail without history, with an up-to-date control event", func(s *S) {
		st := s.Create("now-sse", CT(ctText), Text("history"))
		tail := st.Head().Get(hNextOffset)
		evs, c := st.sseCatchUp(offsetNow)
		Expect(DataEvents(evs)).To(BeEmpty())
		first := Controls(evs)[0]
		Expect(first.NextOffset).To(Equal(tail))
		Expect(first.UpToDate).To(BeTrue())
		st.MustAppend("live")
		evs = c.Collect(s, s.sseBudget(), func(evs []Event) bool { return len(DataEvents(evs)) > 0 })
		Expect(DataEvents(evs)).To(Equal([]string{"live"}))
	})

	ConformanceIt(MUST, Reqs{"B-8-06", "B-5.8-02"}, "starts offset=now SSE on a binary stream with the base64 header and no history", func(s *S) {
		st := s.Create("now-sse-bin", CT(ctOctets), Body([]byte{1, 2, 3}))
		evs, c := st.sseCatchUp(offsetNow)
		Expect(c.Resp).To(HaveHeader(hSSEEncoding, "base64"))
		Expect(DataEvents(evs)).To(BeEmpty())
	})

	ConformanceIt(MUST, Reqs{"B-8-07"}, "answers offset=now on a closed stream at once in every mode with Stream-Closed and the final tail", func(s *S) {
		st := s.Create("now-closed", CT(ctText), Text("data"))
		tail := st.MustClose().Get(hNextOffset)

		r := st.Read(offsetNow)
		Expect(r).To(HaveStatus(200))
		Expect(r).To(HaveEmptyBody())
		Expect(r).To(BeTrueHeader(hClosed))
		Expect(r).To(BeTrueHeader(hUpToDate))
		Expect(r).To(HaveHeader(hNextOffset, tail))

		s.tryTimed(func() string {
			lp := st.LongPoll(offsetNow)
			Expect(lp).To(HaveStatus(204))
			Expect(lp).To(BeTrueHeader(hClosed))
			Expect(lp).To(BeTrueHeader(hUpToDate))
			Expect(lp).To(HaveHeader(hNextOffset, tail))
			return s.slowMiss(lp, "an offset=now long-poll on a closed stream")
		})

		c := st.SSE(offsetNow)
		Expect(c.Resp).To(HaveStatus(200))
		evs := c.CollectToEnd(s, s.sseBudget())
		Expect(evs).To(HaveLen(1), "events: %v", evs)
		ctl := lastControl(evs)
		Expect(ctl.Closed).To(BeTrue())
		Expect(ctl.NextOffset).To(Equal(tail))
	})

	ConformanceIt(MUST, Reqs{"B-8-08"}, "answers offset=now on a missing stream with 404 in every mode", func(s *S) {
		st := s.Stream("now-missing")
		Expect(st.Read(offsetNow)).To(HaveStatus(404))
		Expect(st.LongPoll(offsetNow)).To(HaveStatus(404))
		Expect(st.SSE(offsetNow).Resp).To(HaveStatus(404))
	})

	ConformanceIt(MUST, Reqs{"B-8-01"}, "formats offsets as %016d_%016d, starting at zero and counting stored bytes (D2)", Profile("dsd"), func(s *S) {
		st := s.Stream("d2-format")
		created := st.MustCreate(CT(ctText))
		Expect(created).To(HaveHeader(hNextOffset, "0000000000000000_0000000000000000"))
		Expect(st.MustAppend("hello")).To(Equal("0000000000000000_0000000000000005"))
		Expect(st.MustAppend("!")).To(Equal("0000000000000000_0000000000000006"))
	})

	ConformanceIt(MUST, Reqs{"B-5.6-02"}, "rejects malformed, beyond-tail and mid-message offsets with 400 (D2, A-15)", Profile("dsd"), func(s *S) {
		st := s.Create("d2-reject", CT(ctText))
		st.MustAppend("hello")
		for _, bad := range []string{"abc", "0_5", "0000000000000000_0000000000000099", "0000000000000000_0000000000000002", "-2"} {
			Expect(st.Read(bad)).To(HaveStatus(400), "offset %q", bad)
		}
		Expect(st.Get(Q("offset", offsetStart), Q("live", "bogus"))).To(HaveStatus(400), "unknown live mode")
	})
})
