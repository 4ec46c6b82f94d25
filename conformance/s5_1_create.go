package conformance

import (
	"net/url"
	"strings"
	"time"

	. "github.com/onsi/gomega"
)

// Spec: base protocol §5.1 (digest §4), PUT {stream}.
var _ = Section("5.1", "5.1 Create", func() {
	ConformanceIt(MUST, Reqs{"B-5.1-01", "B-5.1-13"}, "creates a new stream with 201, echoing the content type and returning its tail", func(s *S) {
		st := s.Stream("create")
		r := st.Put(CT(ctText))
		Expect(r).To(HaveStatus(201))
		Expect(r).To(HaveHeader(hContentType, ctText))
		Expect(r.Get(hNextOffset)).To(BeOffset())
		Expect(r).To(HaveNoHeader(hClosed))
		Expect(st.Head()).To(HaveStatus(200))
	})

	ConformanceIt(MUST, Reqs{"B-5.1-01"}, "answers 200 to a repeated PUT with the same configuration", func(s *S) {
		st := s.Create("idem", CT(ctText))
		tail := st.MustAppend("abc")
		r := st.Put(CT(ctText))
		Expect(r).To(HaveStatus(200))
		Expect(r).To(HaveHeader(hContentType, ctText))
		Expect(r).To(HaveHeader(hNextOffset, tail))
		Expect(st.Read(offsetStart)).To(HaveBody("abc"))
	})

	ConformanceIt(MUST, Reqs{"B-5.1-01", "B-5.1-12"}, "answers 409 to a PUT with a different content type", func(s *S) {
		st := s.Create("ct-conflict", CT(ctText))
		Expect(st.Put(CT(ctJSON))).To(HaveStatus(409))
		Expect(st.Head()).To(HaveHeader(hContentType, ctText))
	})

	ConformanceIt(MUST, Reqs{"B-5.1-14"}, "compares content types case-insensitively on re-create", func(s *S) {
		st := s.Create("ct-case", CT("application/json"))
		Expect(st.Put(CT("APPLICATION/JSON"))).To(HaveStatus(200))
	})

	ConformanceIt(MUST, Reqs{"B-5.1-14", "B-5.1-01"}, "answers 200 to the same TTL and 409 to a different TTL", func(s *S) {
		st := s.Create("ttl-cmp", CT(ctText), H(hTTL, "3600"))
		Expect(st.Put(CT(ctText), H(hTTL, "3600"))).To(HaveStatus(200))
		Expect(st.Put(CT(ctText), H(hTTL, "7200"))).To(HaveStatus(409))
	})

	ConformanceIt(MUST, Reqs{"B-5.1-02", "B-5.1-01"}, "compares closure: open matches no Stream-Closed, closed matches Stream-Closed: true", func(s *S) {
		open := s.Create("cmp-open", CT(ctText))
		Expect(open.Put(CT(ctText))).To(HaveStatus(200), "no Stream-Closed on an open stream")
		Expect(open.Put(CT(ctText), H(hClosed, "true"))).To(HaveStatus(409), "Stream-Closed: true on an open stream")
		Expect(open.Head()).To(HaveNoHeader(hClosed), "a rejected PUT must not close the stream")

		closed := s.Create("cmp-closed", CT(ctText), H(hClosed, "true"))
		Expect(closed.Put(CT(ctText))).To(HaveStatus(409), "no Stream-Closed on a closed stream")
		r := closed.Put(CT(ctText), H(hClosed, "true"))
		Expect(r).To(HaveStatus(200), "Stream-Closed: true on a closed stream")
		Expect(r).To(BeTrueHeader(hClosed))
	})

	ConformanceIt(MAY, Reqs{"B-5.1-03"}, "defaults a missing Content-Type to application/octet-stream", func(s *S) {
		st := s.Stream("no-ct")
		r := st.Put(NoCT())
		Expect(r).To(HaveStatus(201))
		Expect(r).To(HaveMediaType(ctOctets))
		Expect(st.Head()).To(HaveMediaType(ctOctets))
	})

	ConformanceIt(MUST, Reqs{"B-5.1-04", "B-5.1-12"}, "rejects malformed Stream-TTL values with 400", func(s *S) {
		for _, v := range []string{"abc", "-1", "00060", "+60", "60.5", "1e3", "0x10"} {
			st := s.Stream("bad-ttl")
			Expect(st.Put(CT(ctText), H(hTTL, v))).To(HaveStatus(400), "Stream-TTL: %q", v)
			Expect(st.Head()).To(HaveStatus(404), "a rejected PUT (Stream-TTL %q) must not create the stream", v)
		}
	})

	ConformanceIt(MUST, Reqs{"B-5.1-04", "B-5.5-02"}, "accepts a valid Stream-TTL and reports it on HEAD", func(s *S) {
		st := s.Create("ttl", CT(ctText), H(hTTL, "3600"))
		h := st.Head()
		Expect(h).To(HaveStatus(200))
		Expect(h).To(HaveHeader(hTTL, "3600"))
	})

	ConformanceIt(MUST, Reqs{"B-5.1-06"}, "rejects an invalid Stream-Expires-At with 400", func(s *S) {
		st := s.Stream("bad-exp")
		Expect(st.Put(CT(ctText), H(hExpiresAt, "not-a-timestamp"))).To(HaveStatus(400))
		Expect(st.Head()).To(HaveStatus(404))
	})

	ConformanceIt(MUST, Reqs{"B-5.1-06", "B-5.5-02"}, "accepts RFC 3339 Stream-Expires-At with Z and with a numeric offset, and reports it on HEAD", func(s *S) {
		at := time.Now().Add(time.Hour).UTC().Truncate(time.Millisecond)
		for _, v := range []string{at.Format("2006-01-02T15:04:05.000Z"), at.Format("2006-01-02T15:04:05.000") + "+00:00"} {
			st := s.Create("exp", CT(ctText), H(hExpiresAt, v))
			h := st.Head()
			Expect(h).To(HaveStatus(200))
			expectInstant(h.Get(hExpiresAt), at.Format(time.RFC3339Nano), "HEAD after a PUT with "+v)
		}
	})

	ConformanceIt(SHOULD, Reqs{"B-5.1-07", "B-5.1-12"}, "rejects Stream-TTL together with Stream-Expires-At with 400", func(s *S) {
		st := s.Stream("ttl-and-exp")
		exp := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		Expect(st.Put(CT(ctText), H(hTTL, "60"), H(hExpiresAt, exp))).To(HaveStatus(400))
		Expect(st.Head()).To(HaveStatus(404))
	})

	ConformanceIt(MUST, Reqs{"B-5.1-11", "B-5.1-13"}, "stores the PUT body as the initial content and returns the tail after it", func(s *S) {
		st := s.Stream("initial")
		r := st.Put(CT(ctText), Text("initial data"))
		Expect(r).To(HaveStatus(201))
		read := st.Read(offsetStart)
		Expect(read).To(HaveStatus(200))
		Expect(read).To(HaveBody("initial data"))
		Expect(read).To(HaveHeader(hNextOffset, r.Get(hNextOffset)))
	})

	ConformanceIt(MUST, Reqs{"B-5.1-09", "B-5.1-13", "B-4-04"}, "creates a closed stream with Stream-Closed: true, its body being the final content", func(s *S) {
		st := s.Stream("create-closed")
		r := st.Put(CT(ctText), H(hClosed, "true"), Text("final"))
		Expect(r).To(HaveStatus(201))
		Expect(r).To(BeTrueHeader(hClosed))
		read := st.Read(offsetStart)
		Expect(read).To(HaveBody("final"))
		Expect(read).To(BeTrueHeader(hClosed))
		Expect(st.Head()).To(BeTrueHeader(hClosed))
		Expect(st.Append("more")).To(HaveStatus(409))
	})

	ConformanceIt(SHOULD, Reqs{"B-5.1-13"}, "answers 201 with an absolute Location naming the stream", func(s *S) {
		st := s.Stream("location")
		r := st.Put(CT(ctText))
		Expect(r).To(HaveStatus(201))
		loc, err := url.Parse(r.Get(hLocation))
		Expect(err).NotTo(HaveOccurred(), "Location %q", r.Get(hLocation))
		Expect(loc.IsAbs()).To(BeTrue(), "Location %q is not absolute", r.Get(hLocation))
		Expect(loc.EscapedPath()).To(Equal(st.Path))
	})

	ConformanceIt(MUST, Reqs{"B-5.1-08", "B-4-03"}, "expires a stream after its TTL: HEAD, GET and POST answer 404, PUT creates it anew", Label("slow"), func(s *S) {
		st := s.Create("ttl-expiry", CT(ctText), H(hTTL, "1"))
		Eventually(s.Ctx, func() int { return st.Head().StatusCode }).
			WithTimeout(6 * time.Second).WithPolling(200 * time.Millisecond).Should(Equal(404))
		Expect(st.Read(offsetStart)).To(HaveStatus(404))
		Expect(st.Append("late")).To(HaveStatus(404))
		Expect(st.Put(CT(ctText))).To(HaveStatus(201), "an expired stream's URL can be created again")
		Expect(st.Read(offsetStart)).To(HaveBody(""))
	})

	ConformanceIt(MUST, Reqs{"B-5.1-08"}, "expires a stream at its Stream-Expires-At", Label("slow"), func(s *S) {
		at := time.Now().Add(2 * time.Second).UTC().Format("2006-01-02T15:04:05.000Z")
		st := s.Create("expires-at", CT(ctText), H(hExpiresAt, at))
		Expect(st.Read(offsetStart)).To(HaveStatus(200))
		Eventually(s.Ctx, func() int { return st.Read(offsetStart).StatusCode }).
			WithTimeout(7 * time.Second).WithPolling(200 * time.Millisecond).Should(Equal(404))
	})

	ConformanceIt(MUST, Reqs{"B-5.1-08", "B-5.1-04", "B-5.5-03"}, "restarts a sliding TTL on reads and appends, not on HEAD", Label("slow"), func(s *S) {
		st := s.Create("ttl-slide", CT(ctText), H(hTTL, "2"))
		deadline := time.Now().Add(3 * time.Second)
		for i := 0; time.Now().Before(deadline); i++ {
			time.Sleep(300 * time.Millisecond)
			if i%2 == 0 {
				Expect(st.Read(offsetStart)).To(HaveStatus(200), "a GET every 300 ms keeps a 2 s TTL alive")
			} else {
				Expect(st.Append("x")).To(HaveStatus(204), "a POST every 300 ms keeps a 2 s TTL alive")
			}
		}
		Eventually(s.Ctx, func() int { return st.Head().StatusCode }).
			WithTimeout(6*time.Second).WithPolling(200*time.Millisecond).Should(Equal(404), "HEAD must not keep the stream alive")
	})

	ConformanceIt(MUST, Reqs{"B-5.1-05"}, "keeps a stream with a waiting long-poll reader alive past its TTL", Label("slow"), func(s *S) {
		st := s.Create("ttl-live", CT(ctText), H(hTTL, "2"))
		tail := st.MustAppend("x")
		deadline := time.Now().Add(3 * time.Second)
		for time.Now().Before(deadline) {
			r := st.LongPoll(tail)
			Expect(r).To(HaveStatus(204), "long-polls back to back restart the TTL, so the stream stays alive")
		}
		Expect(st.Head()).To(HaveStatus(200))
	})

	ConformanceIt(MUST, Reqs{"B-5.1-01"}, "ignores the body of a repeated PUT (acknowledged bytes never change)", Profile("dsd"), func(s *S) {
		st := s.Create("reput-body", CT(ctText), Text("one"))
		Expect(st.Put(CT(ctText), Text("two"))).To(HaveStatus(200))
		Expect(st.Read(offsetStart)).To(HaveBody("one"))
	})

	ConformanceIt(MUST, Reqs{"B-5.1-12"}, "rejects a Content-Type that is not type/subtype with 400 (A-11)", Profile("dsd"), func(s *S) {
		st := s.Stream("bad-ct")
		Expect(st.Put(CT("not a media type"))).To(HaveStatus(400))
	})

	ConformanceIt(MUST, Reqs{"B-5.1-06"}, "rejects a Stream-Expires-At in the past with 400 (A-12)", Profile("dsd"), func(s *S) {
		st := s.Stream("past-exp")
		past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
		Expect(st.Put(CT(ctText), H(hExpiresAt, past))).To(HaveStatus(400))
	})

	ConformanceIt(MUST, Reqs{"B-5.1-04"}, "accepts Stream-TTL 0 and above-range values answer 400 (A-13)", Profile("dsd"), func(s *S) {
		Expect(s.Stream("ttl-zero").Put(CT(ctText), H(hTTL, "0"))).To(HaveStatus(201))
		Expect(s.Stream("ttl-huge").Put(CT(ctText), H(hTTL, "9007199254740992"))).To(HaveStatus(400))
		Expect(s.Stream("ttl-long").Put(CT(ctText), H(hTTL, strings.Repeat("9", 30)))).To(HaveStatus(400))
	})
})
