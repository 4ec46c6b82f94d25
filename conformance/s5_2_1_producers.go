package conformance

import (
	"fmt"

	. "github.com/onsi/gomega"
)

// producer returns the three producer headers (§5.2.1).
func producer(id string, epoch, seq int) Opt {
	return func(r *reqSpec) {
		r.header.Set(hProducerID, id)
		r.header.Set(hProducerEpoch, fmt.Sprint(epoch))
		r.header.Set(hProducerSeq, fmt.Sprint(seq))
	}
}

// Spec: base protocol §5.2.1 (digest §6), idempotent producers.
var _ = Section("5.2.1", "5.2.1 Idempotent producers", func() {
	ConformanceIt(MUST, Reqs{"B-5.2.1-03", "B-5.2.1-04", "B-5.2-08"}, "accepts a new producer's (epoch 0, seq 0) with 200, echoing epoch, seq and the tail", func(s *S) {
		st := s.Create("p-first", CT(ctText))
		r := st.Append("a", producer("p1", 0, 0))
		Expect(r).To(HaveStatus(200))
		Expect(r).To(HaveHeader(hProducerEpoch, "0"))
		Expect(r).To(HaveHeader(hProducerSeq, "0"))
		Expect(r.Get(hNextOffset)).To(BeOffset())
		Expect(st.Head()).To(HaveHeader(hNextOffset, r.Get(hNextOffset)))
	})

	ConformanceIt(MUST, Reqs{"B-5.2.1-03", "B-5.2.1-04", "B-5.2.1-05"}, "accepts consecutive seqs and answers a duplicate with 204, the highest accepted seq and no new data", func(s *S) {
		st := s.Create("p-dup", CT(ctText))
		for seq, body := range []string{"first", "second", "third"} {
			r := st.Append(body, producer("p1", 0, seq))
			Expect(r).To(HaveStatus(200), "seq %d", seq)
			Expect(r).To(HaveHeader(hProducerSeq, fmt.Sprint(seq)))
		}
		dup := st.Append("second", producer("p1", 0, 1))
		Expect(dup).To(HaveStatus(204))
		Expect(dup).To(HaveHeader(hProducerEpoch, "0"))
		Expect(dup).To(HaveHeader(hProducerSeq, "2"), "a duplicate reports the highest accepted seq, not its own")
		Expect(st.Read(offsetStart)).To(HaveBody("firstsecondthird"))
	})

	ConformanceIt(MUST, Reqs{"B-5.2.1-03", "B-5.2.1-05"}, "answers a retry of seq 0 with 204 without corrupting the producer state", func(s *S) {
		st := s.Create("p-dup0", CT(ctText))
		Expect(st.Append("a", producer("p1", 0, 0))).To(HaveStatus(200))
		Expect(st.Append("a", producer("p1", 0, 0))).To(HaveStatus(204))
		Expect(st.Append("b", producer("p1", 0, 1))).To(HaveStatus(200))
		Expect(st.Read(offsetStart)).To(HaveBody("ab"))
	})

	ConformanceIt(MUST, Reqs{"B-5.2.1-03", "B-5.2.1-04"}, "accepts an epoch bump at seq 0 and fences the old epoch with 403 and the current epoch", func(s *S) {
		st := s.Create("p-fence", CT(ctText))
		Expect(st.Append("a", producer("p1", 0, 0))).To(HaveStatus(200))
		Expect(st.Append("b", producer("p1", 0, 1))).To(HaveStatus(200))
		bump := st.Append("c", producer("p1", 1, 0))
		Expect(bump).To(HaveStatus(200))
		Expect(bump).To(HaveHeader(hProducerEpoch, "1"))
		zombie := st.Append("z", producer("p1", 0, 2))
		Expect(zombie).To(HaveStatus(403))
		Expect(zombie).To(HaveHeader(hProducerEpoch, "1"))
		Expect(st.Read(offsetStart)).To(HaveBody("abc"))
	})

	ConformanceIt(MUST, Reqs{"B-5.2.1-03"}, "rejects an epoch bump with a non-zero seq with 400", func(s *S) {
		st := s.Create("p-bump-seq", CT(ctText))
		Expect(st.Append("a", producer("p1", 0, 0))).To(HaveStatus(200))
		Expect(st.Append("b", producer("p1", 1, 1))).To(HaveStatus(400))
		Expect(st.Read(offsetStart)).To(HaveBody("a"))
	})

	ConformanceIt(MUST, Reqs{"B-5.2.1-03", "B-5.2.1-04"}, "rejects a seq gap with 409, Producer-Expected-Seq and Producer-Received-Seq", func(s *S) {
		st := s.Create("p-gap", CT(ctText))
		Expect(st.Append("a", producer("p1", 0, 0))).To(HaveStatus(200))
		r := st.Append("c", producer("p1", 0, 2))
		Expect(r).To(HaveStatus(409))
		Expect(r).To(HaveHeader(hExpectedSeq, "1"))
		Expect(r).To(HaveHeader(hReceivedSeq, "2"))
		Expect(st.Read(offsetStart)).To(HaveBody("a"))
	})

	ConformanceIt(MUST, Reqs{"B-5.2.1-03"}, "rejects an unknown producer starting above seq 0 with 409 expecting 0", func(s *S) {
		st := s.Create("p-new-gap", CT(ctText))
		r := st.Append("x", producer("p1", 0, 3))
		Expect(r).To(HaveStatus(409))
		Expect(r).To(HaveHeader(hExpectedSeq, "0"))
		Expect(r).To(HaveHeader(hReceivedSeq, "3"))
	})

	ConformanceIt(MUST, Reqs{"B-5.2.1-01"}, "rejects a partial set of producer headers and an empty Producer-Id with 400", func(s *S) {
		st := s.Create("p-partial", CT(ctText))
		partial := [][]Opt{
			{H(hProducerID, "p1")},
			{H(hProducerID, "p1"), H(hProducerEpoch, "0")},
			{H(hProducerEpoch, "0"), H(hProducerSeq, "0")},
			{H(hProducerID, "p1"), H(hProducerSeq, "0")},
		}
		for i, opts := range partial {
			Expect(st.Append("x", opts...)).To(HaveStatus(400), "partial header set #%d", i+1)
		}
		Expect(st.Append("x", H(hProducerID, ""), H(hProducerEpoch, "0"), H(hProducerSeq, "0"))).To(HaveStatus(400), "empty Producer-Id")
		Expect(st.Read(offsetStart)).To(HaveBody(""))
	})

	ConformanceIt(MUST, Reqs{"B-5.2.1-02"}, "rejects producer epochs and seqs that are not integers in 0..2^53-1 with 400", func(s *S) {
		st := s.Create("p-ints", CT(ctText))
		for _, v := range []string{"1abc", "0xyz", "1e3", "-1", "1.5", "9007199254740992", ""} {
			Expect(st.Append("x", H(hProducerID, "p1"), H(hProducerEpoch, v), H(hProducerSeq, "0"))).To(HaveStatus(400), "Producer-Epoch %q", v)
			Expect(st.Append("x", H(hProducerID, "p1"), H(hProducerEpoch, "0"), H(hProducerSeq, v))).To(HaveStatus(400), "Producer-Seq %q", v)
		}
		Expect(st.Read(offsetStart)).To(HaveBody(""))
		Expect(st.Append("ok", H(hProducerID, "p1"), H(hProducerEpoch, "9007199254740991"), H(hProducerSeq, "0"))).To(HaveStatus(200), "2^53-1 is a valid epoch")
	})

	ConformanceIt(MUST, Reqs{"B-5.2.1-05"}, "keeps producers independent and interleaves their appends in arrival order", func(s *S) {
		st := s.Create("p-multi", CT(ctText))
		Expect(st.Append("A0", producer("a", 0, 0))).To(HaveStatus(200))
		Expect(st.Append("B0", producer("b", 0, 0))).To(HaveStatus(200))
		Expect(st.Append("A1", producer("a", 0, 1))).To(HaveStatus(200))
		Expect(st.Append("B1", producer("b", 0, 1))).To(HaveStatus(200))
		Expect(st.Read(offsetStart)).To(HaveBody("A0B0A1B1"))
	})

	ConformanceIt(MUST, Reqs{"B-5.2.1-05"}, "deduplicates a producer retry before checking Stream-Seq", func(s *S) {
		st := s.Create("p-seq", CT(ctText))
		Expect(st.Append("a", producer("p1", 0, 0), H(hSeq, "0001"))).To(HaveStatus(200))
		Expect(st.Append("a", producer("p1", 0, 0), H(hSeq, "0001"))).To(HaveStatus(204))
		Expect(st.Append("b", producer("p1", 0, 1), H(hSeq, "0002"))).To(HaveStatus(200))
		Expect(st.Read(offsetStart)).To(HaveBody("ab"))
	})

	ConformanceIt(MUST, Reqs{"B-5.2.1-05", "B-9.1-03"}, "rejects invalid JSON and [] from a producer with 400 and no state change", func(s *S) {
		st := s.Create("p-json", CT(ctJSON))
		Expect(st.Append(`{"id":`, producer("p1", 0, 0))).To(HaveStatus(400))
		Expect(st.Append(`[]`, producer("p1", 0, 0))).To(HaveStatus(400))
		Expect(st.Append(`{"id":1}`, producer("p1", 0, 0))).To(HaveStatus(200), "seq 0 is still the next expected")
		Expect(st.Append(`{"id":1}`, producer("p1", 0, 0))).To(HaveStatus(204))
		Expect(st.Append(`{"id":2}`, producer("p1", 0, 1))).To(HaveStatus(200))
		Expect(st.Read(offsetStart)).To(HaveBody(`[{"id":1},{"id":2}]`))
	})

	ConformanceIt(MUST, Reqs{"B-5.2.1-05", "B-5.2-08"}, "applies the ordinary append errors with producer headers: 404, 409 type mismatch, 400 empty body", func(s *S) {
		Expect(s.Stream("p-missing").Append("x", CT(ctText), producer("p1", 0, 0))).To(HaveStatus(404))
		st := s.Create("p-errs", CT(ctText))
		Expect(st.Append(`{}`, CT(ctJSON), producer("p1", 0, 0))).To(HaveStatus(409))
		Expect(st.Append("", producer("p1", 0, 0))).To(HaveStatus(400))
		Expect(st.Append("ok", producer("p1", 0, 0))).To(HaveStatus(200), "failed requests leave the producer new")
	})

	ConformanceIt(MUST, Reqs{"B-5.2.1-08", "B-5.2.1-04"}, "closes with a final producer append: 200, Stream-Closed, epoch and seq", func(s *S) {
		st := s.Create("p-close-append", CT(ctText))
		r := st.Append("last", producer("p1", 0, 0), H(hClosed, "true"))
		Expect(r).To(HaveStatus(200))
		Expect(r).To(BeTrueHeader(hClosed))
		Expect(r).To(HaveHeader(hProducerEpoch, "0"))
		Expect(r).To(HaveHeader(hProducerSeq, "0"))
		read := st.Read(offsetStart)
		Expect(read).To(HaveBody("last"))
		Expect(read).To(BeTrueHeader(hClosed))
	})

	ConformanceIt(MUST, Reqs{"B-5.2.1-08"}, "sequences a close-only request with producer headers: 204, Stream-Closed, its seq", func(s *S) {
		st := s.Create("p-close-only", CT(ctText))
		Expect(st.Append("a", producer("p1", 0, 0))).To(HaveStatus(200))
		r := st.Close(producer("p1", 0, 1))
		Expect(r).To(HaveStatus(204))
		Expect(r).To(BeTrueHeader(hClosed))
		Expect(r).To(HaveHeader(hProducerEpoch, "0"))
		Expect(r).To(HaveHeader(hProducerSeq, "1"))
		Expect(st.Head()).To(BeTrueHeader(hClosed))
	})

	ConformanceIt(SHOULD, Reqs{"B-5.2.1-09"}, "answers a retry of the closing tuple with 204 and Stream-Closed, ignoring its body", func(s *S) {
		st := s.Create("p-close-dup", CT(ctText))
		Expect(st.Append("body-A", producer("p1", 0, 0), H(hClosed, "true"))).To(HaveStatus(200))
		r := st.Append("body-B", producer("p1", 0, 0), H(hClosed, "true"))
		Expect(r).To(HaveStatus(204))
		Expect(r).To(BeTrueHeader(hClosed))
		Expect(st.Read(offsetStart)).To(HaveBody("body-A"))

		only := s.Create("p-close-only-dup", CT(ctText))
		Expect(only.Close(producer("p1", 0, 0))).To(HaveStatus(204))
		again := only.Close(producer("p1", 0, 0))
		Expect(again).To(HaveStatus(204))
		Expect(again).To(BeTrueHeader(hClosed))
	})

	ConformanceIt(MUST, Reqs{"B-5.2.1-09", "B-5.2-07"}, "answers 409 with Stream-Closed to other producer appends on a closed stream", func(s *S) {
		st := s.Create("p-closed-409", CT(ctText))
		Expect(st.Append("a", producer("p1", 0, 0), H(hClosed, "true"))).To(HaveStatus(200))
		other := st.Append("b", producer("p2", 0, 0))
		Expect(other).To(HaveStatus(409))
		Expect(other).To(BeTrueHeader(hClosed))
		next := st.Append("c", producer("p1", 0, 1))
		Expect(next).To(HaveStatus(409))
		Expect(next).To(BeTrueHeader(hClosed))
		Expect(st.Read(offsetStart)).To(HaveBody("a"))
	})

	ConformanceIt(MUST, Reqs{"B-5.2.1-09"}, "fences a stale epoch on a closed stream with 403 or 409", func(s *S) {
		st := s.Create("p-closed-stale", CT(ctText))
		Expect(st.Append("a", producer("p1", 0, 0))).To(HaveStatus(200))
		Expect(st.Append("b", producer("p1", 1, 0), H(hClosed, "true"))).To(HaveStatus(200))
		Expect(st.Append("z", producer("p1", 0, 1))).To(HaveStatus(403, 409))
		Expect(st.Read(offsetStart)).To(HaveBody("ab"))
	})

	ConformanceIt(MUST, Reqs{"B-5.2.1-06", "B-5.2.1-03", "B-5.2.1-04"}, "supports auto-claim: (0,0) after epoch 5 gets 403 with epoch 5, then (6,0) is accepted", func(s *S) {
		st := s.Create("p-claim", CT(ctText))
		Expect(st.Append("a", producer("p1", 5, 0))).To(HaveStatus(200))
		r := st.Append("b", producer("p1", 0, 0))
		Expect(r).To(HaveStatus(403))
		Expect(r).To(HaveHeader(hProducerEpoch, "5"))
		Expect(st.Append("b", producer("p1", 6, 0))).To(HaveStatus(200))
		Expect(st.Read(offsetStart)).To(HaveBody("ab"))
	})

	ConformanceIt(MUST, Reqs{"B-5.2.1-04"}, "returns Stream-Next-Offset on a duplicate: the end of the producer's last append (A-08)", Profile("dsd"), func(s *S) {
		st := s.Create("p-dup-offset", CT(ctText))
		tail := st.Append("a", producer("p1", 0, 0)).Get(hNextOffset)
		st.MustAppend("other")
		dup := st.Append("a", producer("p1", 0, 0))
		Expect(dup).To(HaveStatus(204))
		Expect(dup).To(HaveHeader(hNextOffset, tail))
	})

	ConformanceIt(MUST, Reqs{"B-5.2.1-08", "B-5.3-01"}, "sequences producer close-only like an append: a gap is 409 and leaves the stream open (A-07, A-09)", Profile("dsd"), func(s *S) {
		st := s.Create("p-close-table", CT(ctText))
		Expect(st.Append("a", producer("p1", 0, 0))).To(HaveStatus(200))
		gap := st.Close(producer("p1", 0, 2))
		Expect(gap).To(HaveStatus(409))
		Expect(gap).To(HaveHeader(hExpectedSeq, "1"))
		Expect(st.Head()).To(HaveNoHeader(hClosed), "a rejected close-only leaves the stream open")
		Expect(st.Close(producer("p1", 0, 1))).To(HaveStatus(204))
		Expect(st.Close()).To(HaveStatus(204), "close-only without producer headers on a closed stream")
	})

	ConformanceIt(MUST, Reqs{"B-5.2.1-09", "B-5.2-07"}, "answers a close-only with any tuple but the closing one on a closed stream with 409, Stream-Closed and the tail (A-07)", func(s *S) {
		st := s.Create("p-close-foreign", CT(ctText))
		Expect(st.Append("a", producer("p1", 0, 0))).To(HaveStatus(200))
		tail := st.Close(producer("p1", 0, 1)).Get(hNextOffset)
		Expect(st.Close(producer("p1", 0, 1))).To(HaveStatus(204), "a retry of the closing tuple")
		for _, p := range []Opt{producer("p2", 0, 0), producer("p1", 0, 2)} {
			foreign := st.Close(p)
			Expect(foreign).To(HaveStatus(409))
			Expect(foreign).To(BeTrueHeader(hClosed))
			Expect(foreign).To(HaveHeader(hNextOffset, tail))
		}
		Expect(st.Read(offsetStart)).To(HaveBody("a"))
	})
})
