package conformance

import (
	"fmt"
	"math/big"
	"strconv"
	"time"

	. "github.com/onsi/gomega"
)

// parseCursor decodes a decimal cursor, failing the spec otherwise.
func parseCursor(c string) int64 {
	Expect(c).To(MatchRegexp(`^[0-9]+$`), "cursor %q is not decimal", c)
	n, err := strconv.ParseInt(c, 10, 64)
	Expect(err).NotTo(HaveOccurred())
	return n
}

// Spec: base protocol §5.7 (digest §11), GET {stream}?offset=&live=long-poll.
var _ = Section("5.7", "5.7 Long-poll", func() {
	ConformanceIt(MUST, Reqs{"B-5.7-01", "B-5.7-03"}, "rejects a long-poll without offset with 400", func(s *S) {
		st := s.Create("lp-no-offset", CT(ctText), Text("data"))
		Expect(st.LongPoll("")).To(HaveStatus(400))
	})

	ConformanceIt(MUST, Reqs{"B-5.7-02", "B-5.7-04", "B-5.7-10", "B-10-06"}, "answers at once with 200, the data, up-to-date and a decimal Stream-Cursor when data exists", func(s *S) {
		st := s.Create("lp-data", CT(ctText))
		tail := st.MustAppend("ready")
		s.tryTimed(func() string {
			r := st.LongPoll(offsetStart)
			Expect(r).To(HaveStatus(200))
			Expect(r).To(HaveBody("ready"))
			Expect(r).To(HaveHeader(hNextOffset, tail))
			Expect(r).To(BeTrueHeader(hUpToDate))
			Expect(r).To(HaveHeader(hCursor, MatchRegexp(`^[0-9]+$`)))
			Expect(r).To(HaveHeader(hContentType, ctText))
			return s.slowMiss(r, "a long-poll with data available")
		})
	})

	ConformanceIt(MUST, Reqs{"B-5.7-02", "B-5.7-04"}, "wakes a waiting long-poll with the data of an append", func(s *S) {
		st := s.Create("lp-wake", CT(ctText))
		n := 0
		s.tryTimed(func() string {
			n++
			tail := st.Head().Get(hNextOffset)
			done := s.Async(func() *Response { return st.LongPoll(tail) })
			time.Sleep(s.wakeDelay())
			body := fmt.Sprintf("woken-%d", n)
			newTail := st.MustAppend(body)
			r := s.Await(done)
			if r.StatusCode == 204 {
				return fmt.Sprintf("the long-poll timed out (204 after %s) instead of waking", r.Elapsed.Round(time.Millisecond))
			}
			Expect(r).To(HaveStatus(200))
			Expect(r).To(HaveBody(body))
			Expect(r).To(HaveHeader(hNextOffset, newTail))
			Expect(r).To(HaveHeader(hCursor, MatchRegexp(`^[0-9]+$`)))
			return ""
		})
	})

	ConformanceIt(MUST, Reqs{"B-5.7-03", "B-5.7-05", "B-5.7-10"}, "times out with 204, the tail, up-to-date and a Stream-Cursor", func(s *S) {
		st := s.Create("lp-timeout", CT(ctText))
		tail := st.MustAppend("data")
		r := st.LongPoll(tail)
		Expect(r).To(HaveStatus(204))
		Expect(r).To(HaveHeader(hNextOffset, tail))
		Expect(r).To(BeTrueHeader(hUpToDate))
		Expect(r).To(HaveHeader(hCursor, MatchRegexp(`^[0-9]+$`)))
		Expect(r).To(HaveNoHeader(hClosed))
		Expect(r.Elapsed).To(BeNumerically(">=", s.immediate()), "the server must wait before a 204")
	})

	ConformanceIt(MUST, Reqs{"B-5.7-06", "B-5.7-05", "B-5.7-07"}, "answers a long-poll at a closed stream's tail at once with 204, Stream-Closed and up-to-date", func(s *S) {
		st := s.Create("lp-closed", CT(ctText))
		st.MustAppend("data")
		tail := st.MustClose().Get(hNextOffset)
		s.tryTimed(func() string {
			r := st.LongPoll(tail)
			Expect(r).To(HaveStatus(204))
			Expect(r).To(BeTrueHeader(hClosed))
			Expect(r).To(BeTrueHeader(hUpToDate))
			Expect(r).To(HaveHeader(hNextOffset, tail))
			return s.slowMiss(r, "a long-poll at a closed stream's tail")
		})
	})

	ConformanceIt(MUST, Reqs{"B-5.7-02", "B-5.6-06"}, "answers a long-poll before a closed stream's tail with the remaining data and Stream-Closed", func(s *S) {
		st := s.Create("lp-closed-data", CT(ctText))
		mid := st.MustAppend("a")
		st.MustAppend("b")
		st.MustClose()
		r := st.LongPoll(mid)
		Expect(r).To(HaveStatus(200))
		Expect(r).To(HaveBody("b"))
		Expect(r).To(BeTrueHeader(hClosed))
	})

	ConformanceIt(MUST, Reqs{"B-5.7-06"}, "releases a waiting long-poll when the stream closes", func(s *S) {
		s.tryTimed(func() string {
			st := s.Create("lp-close-wake", CT(ctText))
			tail := st.MustAppend("data")
			done := s.Async(func() *Response { return st.LongPoll(tail) })
			time.Sleep(s.wakeDelay())
			st.MustClose()
			r := s.Await(done)
			Expect(r).To(HaveStatus(204))
			if r.Get(hClosed) == "" {
				return fmt.Sprintf("the long-poll timed out (after %s) before the close", r.Elapsed.Round(time.Millisecond))
			}
			Expect(r).To(BeTrueHeader(hClosed))
			Expect(r).To(HaveHeader(hNextOffset, tail))
			return ""
		})
	})

	ConformanceIt(MUST, Reqs{"B-5.7-02", "B-4-04"}, "delivers an append-and-close to a waiting long-poll, then EOF", func(s *S) {
		s.tryTimed(func() string {
			st := s.Create("lp-append-close", CT(ctText))
			tail := st.Head().Get(hNextOffset)
			done := s.Async(func() *Response { return st.LongPoll(tail) })
			time.Sleep(s.wakeDelay())
			final := st.Append("last", H(hClosed, "true"))
			Expect(final).To(HaveStatus(204))
			r := s.Await(done)
			if r.StatusCode == 204 && r.Get(hClosed) == "" {
				return fmt.Sprintf("the long-poll timed out (after %s) before the append", r.Elapsed.Round(time.Millisecond))
			}
			Expect(r).To(HaveStatus(200))
			Expect(r).To(HaveBody("last"))
			eof := st.LongPoll(r.Get(hNextOffset))
			Expect(eof).To(HaveStatus(204))
			Expect(eof).To(BeTrueHeader(hClosed))
			return ""
		})
	})

	ConformanceIt(MUST, Reqs{"B-5.7-03"}, "answers a long-poll on a missing stream with 404", func(s *S) {
		Expect(s.Stream("lp-missing").LongPoll(offsetStart)).To(HaveStatus(404))
	})

	ConformanceIt(MUST, Reqs{"B-10-07", "B-5.7-10"}, "answers an echoed cursor with a strictly greater one", func(s *S) {
		st := s.Create("lp-cursor", CT(ctText))
		tail := st.MustAppend("data")
		first := st.LongPoll(offsetStart)
		Expect(first).To(HaveStatus(200))
		c1 := parseCursor(first.Get(hCursor))
		second := st.LongPoll(tail, Q("cursor", first.Get(hCursor)))
		Expect(second).To(HaveStatus(204))
		Expect(parseCursor(second.Get(hCursor))).To(BeNumerically(">", c1))
	})

	ConformanceIt(MUST, Reqs{"B-10-07"}, "never sends a cursor below one the client echoed from the future", func(s *S) {
		st := s.Create("lp-cursor-future", CT(ctText), Text("data"))
		future := currentCursorInterval(time.Now()) + 1000
		r := st.LongPoll(offsetStart, Q("cursor", strconv.FormatInt(future, 10)))
		Expect(r).To(HaveStatus(200))
		Expect(parseCursor(r.Get(hCursor))).To(BeNumerically(">", future))
	})

	ConformanceIt(MUST, Reqs{"B-10-07"}, "keeps an echoed cursor beyond 2^64 strictly greater (no wrap-around)", func(s *S) {
		st := s.Create("lp-cursor-huge", CT(ctText), Text("data"))
		for _, c := range []string{"18446744073709551615", "99999999999999999999"} {
			r := st.LongPoll(offsetStart, Q("cursor", c))
			Expect(r).To(HaveStatus(200))
			got := r.Get(hCursor)
			Expect(got).To(MatchRegexp(`^[0-9]+$`), "cursor %q is not decimal", got)
			n, _ := new(big.Int).SetString(got, 10)
			client, _ := new(big.Int).SetString(c, 10)
			Expect(n.Cmp(client)).To(Equal(1), "echoed cursor %s answered with %s", c, got)
		}
	})

	ConformanceIt(SHOULD, Reqs{"B-10-06"}, "defaults the cursor to the 20 s interval count since 2024-10-09", func(s *S) {
		st := s.Create("lp-cursor-default", CT(ctText), Text("data"))
		before := currentCursorInterval(time.Now())
		r := st.LongPoll(offsetStart)
		after := currentCursorInterval(time.Now())
		Expect(r).To(HaveStatus(200))
		Expect(parseCursor(r.Get(hCursor))).To(BeNumerically(">=", before))
		Expect(parseCursor(r.Get(hCursor))).To(BeNumerically("<=", after))
	})

	ConformanceIt(MUST, Reqs{"B-10-07", "B-5.7-10"}, "treats a non-numeric cursor as absent and lets the first live parameter win (A-05, A-15)", Profile("dsd"), func(s *S) {
		st := s.Create("lp-cursor-junk", CT(ctText), Text("x"))
		before := currentCursorInterval(time.Now())
		r := st.LongPoll(offsetStart, Q("cursor", "abc"))
		Expect(r).To(HaveStatus(200))
		Expect(parseCursor(r.Get(hCursor))).To(BeNumerically(">=", before))
		Expect(parseCursor(r.Get(hCursor))).To(BeNumerically("<=", currentCursorInterval(time.Now())))
		dup := st.Get(Q("offset", offsetStart), Q("live", "long-poll"), Q("live", "sse"))
		Expect(dup).To(HaveStatus(200))
		Expect(dup).To(HaveBody("x"))
	})
})
