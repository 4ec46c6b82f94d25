package conformance

import (
	"fmt"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// eventuallyStatus polls HEAD of st every 200 ms for up to 5 s until it answers one of
// codes (the upstream suite's bound for asynchronous fork garbage collection, B-4.2-19).
func (st *Stream) eventuallyStatus(codes []int, why string) {
	ginkgo.GinkgoHelper()
	Eventually(st.s.Ctx, func() int { return st.Head().StatusCode }).
		WithTimeout(5*time.Second).WithPolling(200*time.Millisecond).Should(BeElementOf(codes), why)
}

// expiresAt formats t the way JavaScript's toISOString does (RFC 3339, milliseconds, Z).
func expiresAt(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// expectInstant checks that a Stream-Expires-At value denotes the instant of want. The
// spec asks no precision of the reported value (B-5.5-02), so a server that keeps whole
// seconds (reporting 12:00:00Z for 12:00:00.833Z) conforms: the value must be within a
// second of want.
func expectInstant(got, want, what string) {
	ginkgo.GinkgoHelper()
	g, err := time.Parse(time.RFC3339Nano, got)
	Expect(err).NotTo(HaveOccurred(), "%s: Stream-Expires-At %q is not RFC 3339", what, got)
	w, err := time.Parse(time.RFC3339Nano, want)
	Expect(err).NotTo(HaveOccurred(), "%s: the kit's Stream-Expires-At %q", what, want)
	d := g.Sub(w)
	Expect(d > -time.Second && d < time.Second).To(BeTrue(), "%s: Stream-Expires-At %q, want the instant %q (to the second)", what, got, want)
}

// Spec: base protocol §4.2 (digest §3), reading and living with forks: divergence, JSON
// across the boundary, chains, live reads (B-5.7-08), soft delete and garbage collection,
// expiry; and dsd's choices where forks meet the extensions.
var _ = Section("4.2", "4.2 Forking: reads and lifecycle", Ext("fork"), func() {
	ConformanceIt(MUST, Reqs{"B-4.2-18", "B-4.2-02", "B-8-10"}, "keeps source and fork appends invisible to each other after the fork point", func(s *S) {
		src := s.Create("fork-div-src", CT(ctText), Text("base"))
		fork, r := s.mustFork("fork-div", src)
		point := r.Get(hNextOffset)
		srcTail := src.MustAppend("-src")
		forkTail := fork.MustAppend("-fork")
		Expect(srcTail).To(SortAfter(point))
		Expect(forkTail).To(SortAfter(point))
		Expect(src.Read(offsetStart)).To(HaveBody("base-src"))
		Expect(fork.Read(offsetStart)).To(HaveBody("base-fork"))
		Expect(src.Read(point)).To(HaveBody("-src"))
		Expect(fork.Read(point)).To(SatisfyAll(HaveBody("-fork"), HaveHeader(hNextOffset, forkTail)))
		Expect(src.Head()).To(HaveHeader(hNextOffset, srcTail))
		Expect(fork.Head()).To(HaveHeader(hNextOffset, forkTail))
	})

	ConformanceIt(MUST, Reqs{"B-4.2-18"}, "puts no fork header on any response", func(s *S) {
		src := s.Create("fork-hdr-src", CT(ctText), Text("data"))
		st := s.Stream("fork-hdr")
		point := src.Head().Get(hNextOffset)
		Expect(st.Put(forkOf(src), CT(ctText), forkAt(point), forkSub("0"))).To(HaveStatus(201))
		st.ContentType = ctText
		Expect(st.Put(forkOf(src), CT(ctText), forkAt(point), forkSub("0"))).To(HaveStatus(200))
		Expect(st.Head()).To(HaveStatus(200))
		Expect(st.Append("+")).To(HaveStatus(204))
		Expect(st.Read(offsetStart)).To(HaveStatus(200))
		Expect(st.LongPoll(offsetStart)).To(HaveStatus(200))
		sse := st.SSE(offsetStart)
		Expect(sse.Resp).To(HaveStatus(200))
		sse.Close()
		Expect(src.Head()).To(HaveStatus(200))
		Expect(src.Read(offsetStart)).To(HaveStatus(200))
		Expect(st.Delete()).To(HaveStatus(204))
		Expect(s.forkHeadersSeen()).To(BeEmpty())
	})

	ConformanceIt(MUST, Reqs{"B-9.1-04", "B-4.2-02"}, "reads a JSON fork across the fork boundary as one array", func(s *S) {
		src, offs := s.streamOfUnits("fork-json-src", ctJSON, `[{"a":1},{"b":2}]`, `{"c":3}`)
		fork, _ := s.mustFork("fork-json", src)
		fork.MustAppend(`[{"d":4},{"e":5}]`)
		r := fork.Read(offsetStart)
		Expect(r).To(HaveHeader(hContentType, ctJSON))
		Expect(arrayValues(r.Data)).To(Equal([]string{`{"a":1}`, `{"b":2}`, `{"c":3}`, `{"d":4}`, `{"e":5}`}))
		Expect(arrayValues(fork.Read(offs[1]).Data)).To(Equal([]string{`{"c":3}`, `{"d":4}`, `{"e":5}`}))
		Expect(arrayValues(src.Read(offsetStart).Data)).To(Equal([]string{`{"a":1}`, `{"b":2}`, `{"c":3}`}))
	})

	ConformanceIt(MUST, Reqs{"B-4.2-19", "B-4.2-02", "B-4.2-18"}, "reads, forks and appends along a chain of forks", func(s *S) {
		l0, offs := s.streamOfUnits("fork-chain-l0", ctText, "A")
		l1, _ := s.mustFork("fork-chain-l1", l0)
		afterB := l1.MustAppend("B")
		l2, _ := s.mustFork("fork-chain-l2", l1)
		l2.MustAppend("C")
		Expect(l2.Read(offsetStart)).To(HaveBody("ABC"))
		Expect(l2.Read(offs[1])).To(HaveBody("BC"), "the chain shares one offset space")
		Expect(l1.Read(offsetStart)).To(HaveBody("AB"))
		mid, _ := s.mustFork("fork-chain-mid", l2, forkAt(offs[1]))
		Expect(mid.Read(offsetStart)).To(HaveBody("A"), "a fork of the leaf at a point its grandparent holds")
		l3, _ := s.mustFork("fork-chain-l3", l2, forkAt(afterB))
		l3.MustAppend("D")
		Expect(l3.Read(offsetStart)).To(HaveBody("ABD"))
		l0.MustAppend("x")
		l1.MustAppend("y")
		Expect(l2.Read(offsetStart)).To(HaveBody("ABC"))
		Expect(l0.Read(offsetStart)).To(HaveBody("Ax"))
		Expect(l1.Read(offsetStart)).To(HaveBody("ABy"))
	})

	ConformanceIt(MUST, Reqs{"B-5.7-08"}, "answers a long-poll in a fork's inherited range at once", func(s *S) {
		src := s.Create("fork-lp-src", CT(ctText), Text("inherited data"))
		fork, r := s.mustFork("fork-lp", src)
		s.tryTimed(func() string {
			lp := fork.LongPoll(offsetStart)
			Expect(lp).To(SatisfyAll(HaveStatus(200), HaveBody("inherited data"), BeTrueHeader(hUpToDate), HaveHeader(hNextOffset, r.Get(hNextOffset))))
			return s.slowMiss(lp, "a long-poll in the inherited range")
		})
	})

	ConformanceIt(MUST, Reqs{"B-5.7-08", "B-4.2-18"}, "wakes a long-poll at a fork's tail with the fork's appends only, never the source's", func(s *S) {
		src := s.Create("fork-lp-tail-src", CT(ctText), Text("source"))
		fork, _ := s.mustFork("fork-lp-tail", src)
		n := 0
		s.tryTimed(func() string {
			n++
			tail := fork.Head().Get(hNextOffset)
			done := s.Async(func() *Response { return fork.LongPoll(tail) })
			time.Sleep(s.wakeDelay())
			src.MustAppend(fmt.Sprintf(" source extra %d", n))
			time.Sleep(s.wakeDelay())
			body := fmt.Sprintf(" fork new %d", n)
			newTail := fork.MustAppend(body)
			r := s.Await(done)
			if r.StatusCode == 204 {
				Expect(r.Elapsed).To(BeNumerically(">=", s.LongPollTimeout()*3/4), "the long-poll ended with 204 well before the server's timeout: a source append woke a fork reader")
				return fmt.Sprintf("the long-poll timed out (204 after %s) before the fork append", r.Elapsed.Round(time.Millisecond))
			}
			Expect(r).To(HaveStatus(200))
			Expect(r).To(HaveBody(body), "a fork reader sees the fork's append only")
			Expect(r).To(HaveHeader(hNextOffset, newTail))
			return ""
		})
	})

	ConformanceIt(MUST, Reqs{"B-4.2-18", "B-4.2-02"}, "streams a fork over SSE: inherited data, then the fork's own appends, never the source's", func(s *S) {
		src := s.Create("fork-sse-src", CT(ctText), Text("inherited"))
		fork, _ := s.mustFork("fork-sse", src)
		tail := fork.MustAppend("+forked")
		evs, c := fork.sseCatchUp(offsetStart)
		Expect(strings.Join(DataEvents(evs), "")).To(Equal("inherited+forked"))
		Expect(lastControl(evs).NextOffset).To(Equal(tail))
		src.MustAppend("+SOURCE")
		newTail := fork.MustAppend("+live")
		more := c.Collect(s, s.sseBudget(), func(evs []Event) bool {
			l := evs[len(evs)-1]
			if l.Type != "control" {
				return false
			}
			ctl, err := ParseControl(l)
			return err == nil && ctl.NextOffset == newTail
		})
		Expect(strings.Join(DataEvents(more), "")).To(Equal("+live"))
	})

	ConformanceIt(MUST, Reqs{"B-4.2-10", "B-4.2-06", "B-5.4-01", "B-5.7-03"}, "soft-deletes a forked source: 410 on GET, HEAD, POST, DELETE and long-poll, 409 on PUT and on new forks, while forks keep reading", func(s *S) {
		src := s.Create("fork-soft-src", CT(ctText), Text("kept"))
		fork, _ := s.mustFork("fork-soft", src)
		Expect(src.Delete()).To(HaveStatus(204))
		Expect(src.Read(offsetStart)).To(HaveStatus(410))
		Expect(src.Head()).To(HaveStatus(410))
		Expect(src.Append("x")).To(HaveStatus(410))
		Expect(src.LongPoll(offsetStart)).To(HaveStatus(410))
		Expect(src.Delete()).To(HaveStatus(410))
		Expect(src.Put(CT(ctText))).To(HaveStatus(409), "PUT on a soft-deleted path, same configuration")
		Expect(src.Put(CT(ctJSON))).To(HaveStatus(409), "PUT on a soft-deleted path, another configuration")
		late := s.Stream("fork-soft-late")
		Expect(late.Put(forkOf(src))).To(HaveStatus(409), "forking a soft-deleted stream")
		expectNotCreated(late, "soft-deleted source")
		Expect(fork.Read(offsetStart)).To(HaveBody("kept"))
		fork.MustAppend("+more")
		Expect(fork.LongPoll(offsetStart)).To(SatisfyAll(HaveStatus(200), HaveBody("kept+more")))
		grand, _ := s.mustFork("fork-soft-grand", fork)
		Expect(grand.Read(offsetStart)).To(HaveBody("kept+more"))
		Expect(src.Head()).To(HaveStatus(410))
	})

	ConformanceIt(MUST, Reqs{"B-4.2-11", "B-4.2-10"}, "frees a soft-deleted source once its last fork is deleted", func(s *S) {
		src := s.Create("fork-gc-src", CT(ctText), Text("cascade data"))
		f1, _ := s.mustFork("fork-gc-1", src)
		f2, _ := s.mustFork("fork-gc-2", src)
		Expect(src.Delete()).To(HaveStatus(204))
		Expect(src.Head()).To(HaveStatus(410))
		Expect(f1.Delete()).To(HaveStatus(204))
		Expect(f1.Head()).To(HaveStatus(404))
		Expect(src.Head()).To(HaveStatus(410), "another fork still references the source")
		Expect(f2.Read(offsetStart)).To(HaveBody("cascade data"))
		Expect(f2.Delete()).To(HaveStatus(204))
		src.eventuallyStatus([]int{404}, "the source is freed after its last fork is deleted")
		Expect(src.Put(CT(ctText))).To(HaveStatus(201), "a freed path can be created again")
		Expect(src.Read(offsetStart)).To(HaveBody(""))
	})

	ConformanceIt(MUST, Reqs{"B-4.2-11", "B-4.2-19"}, "cascades garbage collection up a chain of soft-deleted forks", func(s *S) {
		l0 := s.Create("fork-cascade-l0", CT(ctText), Text("root"))
		l1, _ := s.mustFork("fork-cascade-l1", l0)
		l2, _ := s.mustFork("fork-cascade-l2", l1)
		Expect(l0.Delete()).To(HaveStatus(204))
		Expect(l1.Delete()).To(HaveStatus(204))
		Expect(l0.Head()).To(HaveStatus(410))
		Expect(l1.Head()).To(HaveStatus(410))
		Expect(l2.Read(offsetStart)).To(HaveBody("root"))
		Expect(l2.Delete()).To(HaveStatus(204))
		Expect(l2.Head()).To(HaveStatus(404))
		l1.eventuallyStatus([]int{404}, "the middle link is freed")
		l0.eventuallyStatus([]int{404}, "the root is freed")
	})

	ConformanceIt(MUST, Reqs{"B-4.2-19", "B-4.2-10"}, "keeps a chain readable when its middle link is deleted", func(s *S) {
		l0 := s.Create("fork-middle-l0", CT(ctText), Text("A"))
		l1, _ := s.mustFork("fork-middle-l1", l0)
		l1.MustAppend("B")
		l2, _ := s.mustFork("fork-middle-l2", l1)
		l2.MustAppend("C")
		Expect(l1.Delete()).To(HaveStatus(204))
		Expect(l1.Head()).To(HaveStatus(410))
		Expect(l2.Read(offsetStart)).To(HaveBody("ABC"))
		Expect(l0.Read(offsetStart)).To(HaveBody("A"))
		l0.MustAppend("x")
		Expect(l2.Read(offsetStart)).To(HaveBody("ABC"))
	})

	ConformanceIt(MUST, Reqs{"B-4.2-19", "B-5.4-01"}, "takes no source reference for a rejected fork and releases deleted forks' references", func(s *S) {
		src, offs := s.streamOfUnits("fork-leak-src", ctText, "data")
		ahead, _ := s.mustFork("fork-leak-ahead", src)
		beyond := ahead.MustAppend("more")
		Expect(ahead.Delete()).To(HaveStatus(204))
		rejected := []struct {
			what string
			code int
			opts []Opt
		}{
			{"content-type mismatch", 409, []Opt{forkOf(src), CT(ctJSON)}},
			{"offset beyond the tail", 400, []Opt{forkOf(src), forkAt(beyond)}},
			{"sub-offset past the unit", 400, []Opt{forkOf(src), forkAt(offs[0]), forkSub("5")}},
			{"malformed offset", 400, []Opt{forkOf(src), forkAt("a,b")}},
		}
		for _, r := range rejected {
			st := s.Stream("fork-leak")
			Expect(st.Put(r.opts...)).To(HaveStatus(r.code), r.what)
			expectNotCreated(st, r.what)
		}
		Expect(src.Read(offsetStart)).To(HaveBody("data"), "the source outlives its deleted forks")
		Expect(src.Delete()).To(HaveStatus(204))
		src.eventuallyStatus([]int{404}, "no fork references the source: DELETE removes it (410 would mean a leaked reference)")
	})

	ConformanceIt(MUST, Reqs{"B-4.2-05", "B-4.2-20", "B-5.5-02"}, "reports fork expiry per the inheritance table: the source's when the fork asks none, its own otherwise, uncapped", func(s *S) {
		srcExp := expiresAt(time.Now().Add(time.Hour))
		forkExp := expiresAt(time.Now().Add(2 * time.Hour))
		sources := map[string][]Opt{"none": nil, "TTL": {H(hTTL, "3600")}, "Expires-At": {H(hExpiresAt, srcExp)}}
		forks := map[string][]Opt{"none": nil, "TTL": {H(hTTL, "7200")}, "Expires-At": {H(hExpiresAt, forkExp)}}
		type want struct{ ttl, exp string }
		table := map[[2]string]want{
			{"none", "none"}: {}, {"none", "TTL"}: {ttl: "7200"}, {"none", "Expires-At"}: {exp: forkExp},
			{"TTL", "none"}: {ttl: "3600"}, {"TTL", "TTL"}: {ttl: "7200"}, {"TTL", "Expires-At"}: {exp: forkExp},
			{"Expires-At", "none"}: {exp: srcExp}, {"Expires-At", "TTL"}: {ttl: "7200"}, {"Expires-At", "Expires-At"}: {exp: forkExp},
		}
		for cell, w := range table {
			what := fmt.Sprintf("source %s, fork %s", cell[0], cell[1])
			src := s.Create("fork-ttl-src", append([]Opt{CT(ctText), Text("x")}, sources[cell[0]]...)...)
			fork, _ := s.mustFork("fork-ttl", src, forks[cell[1]]...)
			h := fork.Head()
			Expect(h).To(HaveStatus(200), what)
			if w.ttl == "" {
				Expect(h).To(HaveNoHeader(hTTL), what)
			} else {
				Expect(h).To(HaveHeader(hTTL, w.ttl), what)
			}
			if w.exp == "" {
				Expect(h).To(HaveNoHeader(hExpiresAt), what)
			} else {
				expectInstant(h.Get(hExpiresAt), w.exp, what)
			}
		}
		short := s.Create("fork-ttl-short", CT(ctText), H(hTTL, "10"))
		long, _ := s.mustFork("fork-ttl-long", short, H(hTTL, "99999"))
		Expect(long.Head()).To(HaveHeader(hTTL, "99999"), "a fork's TTL is not capped by its source's")
	})

	ConformanceIt(MUST, Reqs{"B-4.2-05", "B-4.2-20"}, "lets forks outlive their source, slides an inherited TTL on the fork's own reads, and leaves the source of an expired fork alone", Label("slow"), func(s *S) {
		s1 := s.Create("fork-outlive-src", CT(ctText), H(hTTL, "1"), Text("s1"))
		f1, _ := s.mustFork("fork-outlive", s1, H(hTTL, "60"))
		s2 := s.Create("fork-expire-src", CT(ctText), Text("s2"))
		f2, _ := s.mustFork("fork-expire", s2, H(hTTL, "1"))
		s3 := s.Create("fork-slide-src", CT(ctText), H(hTTL, "2"), Text("s3"))
		f3, _ := s.mustFork("fork-slide", s3)
		Expect(f3.Head()).To(HaveHeader(hTTL, "2"), "the fork inherits the source's TTL value")
		var s1Gone, f2Gone, s3Gone bool
		deadline := time.Now().Add(6 * time.Second)
		for !(s1Gone && f2Gone && s3Gone) {
			Expect(time.Now().Before(deadline)).To(BeTrue(), "after 6 s: source with a 1 s TTL expired: %v; fork with a 1 s TTL expired: %v; source with a 2 s TTL expired: %v", s1Gone, f2Gone, s3Gone)
			time.Sleep(250 * time.Millisecond)
			Expect(f3.Read(offsetStart)).To(SatisfyAll(HaveStatus(200), HaveBody("s3")), "reads every 250 ms keep the fork's own 2 s window open")
			if !s1Gone {
				code := s1.Head().StatusCode
				Expect(code).To(BeElementOf(200, 404, 410))
				s1Gone = code != 200
			}
			if !f2Gone {
				code := f2.Head().StatusCode
				Expect(code).To(BeElementOf(200, 404))
				f2Gone = code == 404
			}
			if !s3Gone {
				code := s3.Head().StatusCode
				Expect(code).To(BeElementOf(200, 404, 410))
				s3Gone = code != 200
			}
		}
		Expect(f1.Read(offsetStart)).To(SatisfyAll(HaveStatus(200), HaveBody("s1")), "a fork outlives its expired source")
		Expect(s1.Read(offsetStart)).To(HaveStatus(404, 410))
		Expect(f3.Read(offsetStart)).To(HaveBody("s3"))
		Expect(f2.Read(offsetStart)).To(HaveStatus(404))
		Expect(s2.Read(offsetStart)).To(HaveBody("s2"), "a fork's expiry does not touch its source")
	})

	// B-4.2-11 lets a server free a soft-deleted source asynchronously, with no bound, so
	// only dsd's choice (the reference is released when the fork expires) can be checked.
	ConformanceIt(MUST, Reqs{"B-4.2-20", "B-4.2-11"}, "releases an expired fork's reference: deleting its source then removes it", Profile("dsd"), Label("slow"), func(s *S) {
		src := s.Create("fork-release-src", CT(ctText), Text("s"))
		fork, _ := s.mustFork("fork-release", src, H(hTTL, "1"))
		fork.eventuallyStatus([]int{404}, "the fork with a 1 s TTL expired")
		Expect(src.Delete()).To(HaveStatus(204))
		src.eventuallyStatus([]int{404}, "the expired fork released its reference")
	})

	ConformanceIt(MUST, Reqs{"B-4.2-12", "B-5.1-10", "B-4.2-06"}, "takes the D2 zero offset as the start, and rejects 9999…_9999…, sentinels and relative source paths with 400 (A-23, A-35)", Profile("dsd"), func(s *S) {
		src := s.Create("fork-d2-src", CT(ctText), Text("source data"))
		zero, r := s.mustFork("fork-d2-zero", src, forkAt("0000000000000000_0000000000000000"))
		Expect(r).To(HaveHeader(hNextOffset, "0000000000000000_0000000000000000"))
		Expect(zero.Read(offsetStart)).To(SatisfyAll(HaveEmptyBody(), BeTrueHeader(hUpToDate)))
		for _, opts := range [][]Opt{
			{forkOf(src), forkAt("9999999999999999_9999999999999999")},
			{forkOf(src), forkAt(offsetStart)},
			{forkOf(src), forkAt(offsetNow)},
			{H(hForkedFrom, strings.TrimPrefix(src.Path, "/"))},
			{H(hForkedFrom, src.URL)},
			{H(hForkedFrom, src.Path+"?offset=-1")},
		} {
			st := s.Stream("fork-d2-bad")
			r := st.Put(opts...)
			Expect(r).To(HaveStatus(400), "%s / %s", r.Request.Header.Get(hForkedFrom), r.Request.Header.Get(hForkOffset))
			expectNotCreated(st, "A-23")
		}
	})

	ConformanceIt(MUST, Reqs{"B-4.2-01"}, "refuses a fork of a stream in another bucket with 400 (forks live in their source's bucket)", Ext("buckets"), Profile("dsd"), func(s *S) {
		other := s.Bucket()
		src := s.StreamIn(other, s.Name("fork-xbucket-src"))
		src.MustCreate(CT(ctText), Text("elsewhere"))
		st := s.Stream("fork-xbucket")
		Expect(st.Put(forkOf(src))).To(HaveStatus(400))
		expectNotCreated(st, "source in another bucket")
	})

	ConformanceIt(MUST, Reqs{"X-6.1-01", "B-8-10", "X-6.3-01"}, "continues the source's record ordinals on a fork (CONFORMANCE.md)", Ext(recordsToken), Profile("dsd"), func(s *S) {
		vals := recVals("r", 0, 4)
		src, offs := s.streamOfUnits("fork-rec-src", ctJSON, jsonBatch(vals[:3]...))
		fork, r := s.mustFork("fork-rec", src)
		Expect(r).To(HaveRecordRange(3, 3))
		Expect(fork.Head()).To(HaveRecordBounds(0, 3))
		fork.mustAppendRecords(3, vals[3])
		Expect(ndjsonValues(fork.recordRead("record", "1").Data)).To(Equal(vals[1:4]))
		src.mustAppendRecords(3, recVal("src", 3))
		o := src.x6RecordOffsets(0, 3)
		mid, r := s.mustFork("fork-rec-mid", src, forkAt(o.at(2)))
		Expect(r).To(HaveRecordRange(2, 2))
		Expect(mid.Head()).To(HaveRecordBounds(0, 2))
		mid.mustAppendRecords(2, recVal("mid", 2))
		Expect(ndjsonValues(mid.recordRead("record", "0").Data)).To(Equal([]string{vals[0], vals[1], recVal("mid", 2)}))
		sub, r := s.mustFork("fork-rec-sub", src, forkAt(offs[0]), forkSub("2"))
		Expect(r).To(HaveRecordRange(0, 2), "the materialized prefix keeps the source's ordinals")
		Expect(sub.Head()).To(HaveRecordBounds(0, 2))
		Expect(ndjsonValues(sub.recordRead("record", "1").Data)).To(Equal(vals[1:2]))
	})

	ConformanceIt(MUST, Reqs{"X-6.1-04", "X-3.4-03"}, "gives a fork the source's retention and the snapshot covering it, and refuses a fork before the snapshot of a retained stream with 410 (CONFORMANCE.md)", Ext(recordsToken), Ext("snapshot"), Profile("dsd"), func(s *S) {
		vals := recVals("r", 0, 6)
		src := s.createJSON("fork-ret-src", vals...)
		o := src.x6RecordOffsets(0, 6)
		snapAt := src.x6Snapshot(4, `{"folded":4}`)
		Expect(s.Do("PUT", src.Ext+"/retention?record=2")).To(HaveStatus(204))
		whole, _ := s.mustFork("fork-ret", src)
		Expect(whole.Head()).To(HaveRecordBounds(2, 6))
		Expect(whole.recordRead("record", "1")).To(SatisfyAll(HaveStatus(410), HaveRecordBounds(2, 6)))
		Expect(whole.Read(offsetStart)).To(HaveStatus(410), "-1 is before the inherited retained start (D2)")
		Expect(arrayValues(whole.Read(o.at(2)).Data)).To(Equal(vals[2:]))
		Expect(whole.x6SnapshotOffset()).To(Equal(snapAt), "the fork's /bootstrap is covered by the inherited snapshot")
		atSnap, _ := s.mustFork("fork-ret-at-snap", src, forkAt(o.at(4)))
		Expect(atSnap.Head()).To(HaveRecordBounds(2, 4))
		for _, r := range []int{3, 1} {
			st := s.Stream("fork-ret-early")
			Expect(st.Put(forkOf(src), forkAt(o.at(r)))).To(HaveStatus(410), "a fork at O(%d): before the snapshot at record 4, with retention at record 2", r)
			expectNotCreated(st, "no snapshot covers the fork's retained start")
		}
	})

	ConformanceIt(MUST, Reqs{"X-5.3-02"}, "gives a fork no attributes of its source (CONFORMANCE.md)", Ext("attrs"), Profile("dsd"), func(s *S) {
		src := s.Create("fork-attrs-src", CT(ctText), H("Stream-Attrs", `{"title":"source"}`), Text("x"))
		Expect(s.Do("GET", src.Ext+"/attrs")).To(HaveBody(`{"title":"source"}`))
		fork, _ := s.mustFork("fork-attrs", src)
		r := s.Do("GET", fork.Ext+"/attrs")
		Expect(r).To(HaveStatus(200))
		Expect(r).To(HaveBody("{}"))
	})
})
