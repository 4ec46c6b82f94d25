package conformance

import (
	"strings"

	. "github.com/onsi/gomega"
)

// cacheablePattern is the Cache-Control §10 recommends for shared or private reads.
const cacheablePattern = `^(public|private), max-age=60, stale-while-revalidate=300$`

// Spec: base protocol §10 (digest §16), caching, ETag and 304.
var _ = Section("10", "10 Caching", func() {
	ConformanceIt(MUST, Reqs{"B-10-03", "B-10-04"}, "answers an If-None-Match with the current ETag with 304 and no body", func(s *S) {
		st := s.Create("etag-304", CT(ctText), Text("data"))
		r := st.Read(offsetStart)
		etag := r.Get(hETag)
		Expect(etag).NotTo(BeEmpty())
		nm := st.Read(offsetStart, H(hIfNoneMatch, etag))
		Expect(nm).To(HaveStatus(304))
		Expect(nm).To(HaveEmptyBody())
	})

	ConformanceIt(MUST, Reqs{"B-10-04"}, "answers a non-matching If-None-Match with 200 and the data", func(s *S) {
		st := s.Create("etag-wrong", CT(ctText), Text("data"))
		r := st.Read(offsetStart, H(hIfNoneMatch, `"wrong-etag"`))
		Expect(r).To(HaveStatus(200))
		Expect(r).To(HaveBody("data"))
	})

	ConformanceIt(MUST, Reqs{"B-10-04", "B-10-03"}, "changes the ETag after an append, so the old one answers 200", func(s *S) {
		st := s.Create("etag-append", CT(ctText), Text("one"))
		old := st.Read(offsetStart).Get(hETag)
		st.MustAppend("two")
		r := st.Read(offsetStart, H(hIfNoneMatch, old))
		Expect(r).To(HaveStatus(200))
		Expect(r).To(HaveBody("onetwo"))
		Expect(r.Get(hETag)).NotTo(Equal(old))
	})

	ConformanceIt(MUST, Reqs{"B-10-03"}, "changes the ETag when the stream closes without new data", func(s *S) {
		st := s.Create("etag-close", CT(ctText), Text("data"))
		open := st.Read(offsetStart)
		st.MustClose()
		r := st.Read(offsetStart, H(hIfNoneMatch, open.Get(hETag)))
		Expect(r).To(HaveStatus(200), "the open stream's ETag must not match after the close")
		Expect(r).To(BeTrueHeader(hClosed))
		Expect(r.Get(hETag)).NotTo(Equal(open.Get(hETag)))
	})

	ConformanceIt(MUST, Reqs{"B-10-03"}, "sends an ETag on catch-up reads at the tail and on long-poll 200s", func(s *S) {
		st := s.Create("etag-kinds", CT(ctText))
		tail := st.MustAppend("x")
		Expect(st.Read(tail)).To(HaveHeader(hETag, Not(BeEmpty())))
		Expect(st.LongPoll(offsetStart)).To(HaveHeader(hETag, Not(BeEmpty())))
	})

	ConformanceIt(SHOULD, Reqs{"B-10-01"}, "sends a public or private 60 s Cache-Control on catch-up and long-poll reads with data", func(s *S) {
		st := s.Create("cache", CT(ctText), Text("data"))
		Expect(st.Read(offsetStart)).To(HaveHeader(hCacheControl, MatchRegexp(cacheablePattern)))
		Expect(st.LongPoll(offsetStart)).To(HaveHeader(hCacheControl, MatchRegexp(cacheablePattern)))
	})

	// No requirement states CORS headers: allowing If-None-Match in a preflight (so that
	// browsers can send conditional reads, B-10-03) is dsd's choice.
	ConformanceIt(SHOULD, Reqs{"B-10-03"}, "allows If-None-Match in CORS preflight responses", Profile("dsd"), func(s *S) {
		st := s.Create("cors-inm", CT(ctText))
		r := s.Do("OPTIONS", st.URL,
			H("Origin", "https://example.com"),
			H("Access-Control-Request-Method", "GET"),
			H("Access-Control-Request-Headers", "if-none-match"))
		Expect(r).To(HaveStatus(200, 204))
		allowed := strings.ToLower(r.Get("Access-Control-Allow-Headers"))
		Expect(allowed == "*" || strings.Contains(allowed, "if-none-match")).To(BeTrue(),
			"Access-Control-Allow-Headers %q does not allow If-None-Match", r.Get("Access-Control-Allow-Headers"))
	})

	ConformanceIt(SHOULD, Reqs{"B-10-01", "B-10-02"}, "keeps an empty read at an open tail from being cached: no-cache (A-04)", Profile("dsd"), func(s *S) {
		st := s.Create("cache-tail", CT(ctText))
		tail := st.MustAppend("x")
		Expect(st.Read(tail)).To(HaveHeader(hCacheControl, "no-cache"))
		st.MustClose()
		Expect(st.Read(tail)).To(HaveHeader(hCacheControl, MatchRegexp(cacheablePattern)), "EOF responses are cacheable")
	})

	ConformanceIt(MUST, Reqs{"B-10-03"}, "repeats the ETag on a 304 and marks closure with :c (A-03)", Profile("dsd"), func(s *S) {
		st := s.Create("etag-dsd", CT(ctText), Text("x"))
		etag := st.Read(offsetStart).Get(hETag)
		Expect(etag).To(MatchRegexp(`^"[^"]+:-1@[0-9]+:[^":]+"$`))
		Expect(st.Read(offsetStart, H(hIfNoneMatch, etag))).To(HaveHeader(hETag, etag))
		st.MustClose()
		Expect(st.Read(offsetStart).Get(hETag)).To(HaveSuffix(`:c"`))
	})

	ConformanceIt(MUST, Reqs{"B-10-03"}, "answers a HEAD whose If-None-Match names its ETag with 304, and a stale one with 200", Profile("dsd"), func(s *S) {
		st := s.Create("etag-head", CT(ctText), Text("abc"))
		etag := st.Head().Get(hETag)
		Expect(etag).NotTo(BeEmpty())
		Expect(st.Head(H(hIfNoneMatch, etag))).To(SatisfyAll(HaveStatus(304), HaveHeader(hETag, etag)))
		st.MustAppend("d")
		Expect(st.Head(H(hIfNoneMatch, etag))).To(HaveStatus(200), "after an append")
	})

	ConformanceIt(SHOULD, Reqs{"B-10-03"}, "gives a HEAD the ETag and Content-Encoding of its GET for the same Accept-Encoding, each validating the other (RFC 9110 §9.3.2, A-03)", Profile("dsd"), func(s *S) {
		st := s.Create("etag-coding", CT(ctText), Text(strings.Repeat("compressible ", 400)))
		for _, ae := range []string{"gzip", "identity"} {
			get, head := st.Get(H("Accept-Encoding", ae)), st.Head(H("Accept-Encoding", ae))
			Expect(head).To(HaveStatus(200))
			Expect(head.Get(hETag)).To(Equal(get.Get(hETag)), "Accept-Encoding: %s", ae)
			Expect(head.Get("Content-Encoding")).To(Equal(get.Get("Content-Encoding")), "Accept-Encoding: %s", ae)
			Expect(st.Head(H("Accept-Encoding", ae), H(hIfNoneMatch, get.Get(hETag)))).To(HaveStatus(304), "HEAD with the GET's ETag, Accept-Encoding: %s", ae)
			Expect(st.Get(H("Accept-Encoding", ae), H(hIfNoneMatch, head.Get(hETag)))).To(HaveStatus(304), "GET with the HEAD's ETag, Accept-Encoding: %s", ae)
		}
	})

	ConformanceIt(MUST, Reqs{"B-10-03", "B-4-03"}, "gives HEAD an ETag and a re-created stream a new incarnation: offsets restart, ETags differ (A-03, A-28)", Profile("dsd"), func(s *S) {
		st := s.Create("incarnation", CT(ctText), Text("abc"))
		Expect(st.Head()).To(HaveHeader(hETag, MatchRegexp(`^"[^"]+:-1@[0-9]+:[^"]+"$`)))
		old := st.Read(offsetStart).Get(hETag)
		Expect(st.Delete()).To(HaveStatus(204))
		again := st.Put(CT(ctText), Text("abc"))
		Expect(again).To(HaveStatus(201))
		Expect(again).To(HaveHeader(hNextOffset, "0000000000000000_0000000000000003"))
		r := st.Read(offsetStart, H(hIfNoneMatch, old))
		Expect(r).To(HaveStatus(200), "the old incarnation's ETag must not match the new stream")
		Expect(r.Get(hETag)).NotTo(Equal(old))
	})
})
