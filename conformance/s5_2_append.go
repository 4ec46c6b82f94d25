package conformance

import (
	"bytes"

	. "github.com/onsi/gomega"
)

// Spec: base protocol §5.2 (digest §5), POST {stream}.
var _ = Section("5.2", "5.2 Append", func() {
	ConformanceIt(MUST, Reqs{"B-5.2-08", "B-5.2-09", "B-8-11"}, "answers 204 with a Stream-Next-Offset after the previous tail", func(s *S) {
		st := s.Stream("append")
		tail0 := st.MustCreate(CT(ctText)).Get(hNextOffset)
		r := st.Append("hello")
		Expect(r).To(HaveStatus(204))
		Expect(r.Get(hNextOffset)).To(BeOffset())
		Expect(r.Get(hNextOffset)).To(SortAfter(tail0))
		Expect(r).To(HaveNoHeader(hClosed))
	})

	ConformanceIt(MUST, Reqs{"B-5.2-01", "B-4-01", "B-5.6-09"}, "stores appends in order and makes each visible to the next read", func(s *S) {
		st := s.Create("order", CT(ctText))
		want := ""
		for _, chunk := range []string{"one ", "two ", "three"} {
			st.MustAppend(chunk)
			want += chunk
			Expect(st.Read(offsetStart)).To(HaveBody(want))
		}
	})

	ConformanceIt(MUST, Reqs{"B-5.2-02", "B-12.4-01", "B-5.2-08"}, "rejects a body whose Content-Type differs from the stream's with 409", func(s *S) {
		st := s.Create("ct-mismatch", CT(ctText))
		st.MustAppend("ok")
		Expect(st.Append(`{"x":1}`, CT(ctJSON))).To(HaveStatus(409))
		Expect(st.Read(offsetStart)).To(HaveBody("ok"))
	})

	ConformanceIt(MUST, Reqs{"B-5.2-02", "B-5.2-08"}, "rejects a body without Content-Type with 400", func(s *S) {
		st := s.Create("no-ct", CT(ctText))
		Expect(st.Append("data", NoCT())).To(HaveStatus(400))
		Expect(st.Read(offsetStart)).To(HaveBody(""))
	})

	ConformanceIt(MUST, Reqs{"B-5.2-02"}, "compares media types: TEXT/PLAIN matches text/plain, a charset parameter is ignored", func(s *S) {
		text := s.Create("ct-upper", CT(ctText))
		Expect(text.Append("a", CT("TEXT/PLAIN"))).To(HaveStatus(204))
		js := s.Create("ct-charset", CT(ctJSON))
		Expect(js.Append(`{"a":1}`, CT("application/json; charset=utf-8"))).To(HaveStatus(204))
		Expect(js.Read(offsetStart)).To(HaveBody(`[{"a":1}]`))
	})

	ConformanceIt(MUST, Reqs{"B-5.2-06", "B-5.2-08"}, "rejects an empty body without Stream-Closed with 400", func(s *S) {
		st := s.Create("empty-post", CT(ctText))
		Expect(st.Append("")).To(HaveStatus(400))
		Expect(st.Head()).To(HaveNoHeader(hClosed))
	})

	ConformanceIt(MUST, Reqs{"B-5.2-03"}, "ignores the Content-Type of an empty close-only request", func(s *S) {
		st := s.Create("close-ct", CT(ctJSON))
		r := st.Close(CT(ctText))
		Expect(r).To(HaveStatus(204))
		Expect(r).To(BeTrueHeader(hClosed))
	})

	ConformanceIt(MUST, Reqs{"B-5.2-08"}, "answers 404 to an append to a missing stream", func(s *S) {
		st := s.Stream("missing")
		Expect(st.Append("x", CT(ctText))).To(HaveStatus(404))
		Expect(st.Head()).To(HaveStatus(404), "an append must not create the stream")
	})

	ConformanceIt(MUST, Reqs{"B-5.2-05", "B-12.6-01"}, "compares Stream-Seq as raw bytes: 2 then 10 is a regression, 09 then 10 is not", func(s *S) {
		a := s.Create("seq-lex", CT(ctText))
		Expect(a.Append("a", H(hSeq, "2"))).To(HaveStatus(204))
		Expect(a.Append("b", H(hSeq, "10"))).To(HaveStatus(409))
		Expect(a.Read(offsetStart)).To(HaveBody("a"))

		b := s.Create("seq-pad", CT(ctText))
		Expect(b.Append("a", H(hSeq, "09"))).To(HaveStatus(204))
		Expect(b.Append("b", H(hSeq, "10"))).To(HaveStatus(204))
	})

	ConformanceIt(MUST, Reqs{"B-5.2-05", "B-12.6-01"}, "rejects a repeated or byte-wise smaller Stream-Seq with 409 (case-sensitive)", func(s *S) {
		st := s.Create("seq-dup", CT(ctText))
		Expect(st.Append("1", H(hSeq, "001"))).To(HaveStatus(204))
		Expect(st.Append("2", H(hSeq, "001"))).To(HaveStatus(409))
		Expect(st.Append("3", H(hSeq, "a"))).To(HaveStatus(204))
		Expect(st.Append("4", H(hSeq, "B"))).To(HaveStatus(409), `"B" (0x42) sorts before "a" (0x61)`)
		Expect(st.Read(offsetStart)).To(HaveBody("13"))
	})

	ConformanceIt(SHOULD, Reqs{"B-5.2-04"}, "accepts a chunked request body", func(s *S) {
		st := s.Create("chunked", CT(ctText))
		Expect(st.Append("streamed body", Chunked())).To(HaveStatus(204))
		Expect(st.Read(offsetStart)).To(HaveBody("streamed body"))
	})

	ConformanceIt(MUST, Reqs{"B-5.2-07", "B-5.2-10"}, "answers 409 with Stream-Closed and the final offset to an append on a closed stream", func(s *S) {
		st := s.Create("closed-append", CT(ctText))
		st.MustAppend("data")
		closed := st.MustClose()
		r := st.Append("more")
		Expect(r).To(HaveStatus(409))
		Expect(r).To(BeTrueHeader(hClosed))
		Expect(r).To(HaveHeader(hNextOffset, closed.Get(hNextOffset)))
		Expect(st.Read(offsetStart)).To(HaveBody("data"))
	})

	ConformanceIt(MUST, Reqs{"B-5.2-07"}, "answers 409 with Stream-Closed to an append-and-close on a closed stream", func(s *S) {
		st := s.Create("closed-append-close", CT(ctText))
		st.MustClose()
		r := st.Append("late", H(hClosed, "true"))
		Expect(r).To(HaveStatus(409))
		Expect(r).To(BeTrueHeader(hClosed))
		Expect(st.Read(offsetStart)).To(HaveBody(""))
	})

	ConformanceIt(SHOULD, Reqs{"B-5.2-11"}, "reports closure before a content-type mismatch", func(s *S) {
		st := s.Create("closed-first", CT(ctText))
		st.MustClose()
		r := st.Append(`{"x":1}`, CT(ctJSON))
		Expect(r).To(HaveStatus(409))
		Expect(r).To(BeTrueHeader(hClosed))
	})

	ConformanceIt(MUST, Reqs{"B-5.2-12"}, "accepts a 10 MiB append or refuses it with 413", func(s *S) {
		st := s.Create("big", CT(ctOctets))
		body := bytes.Repeat([]byte("0123456789abcdef"), 10<<20/16)
		r := st.AppendBytes(body)
		Expect(r).To(HaveStatus(200, 204, 413))
		if r.StatusCode != 413 {
			data, _ := st.CatchUp(offsetStart)
			Expect(len(data)).To(Equal(len(body)))
			Expect(bytes.Equal(data, body)).To(BeTrue(), "10 MiB body read back differently")
		}
	})

	ConformanceIt(MUST, Reqs{"B-5.2-05"}, "rejects an empty Stream-Seq with 400 and ignores Stream-Seq on close-only (A-06)", Profile("dsd"), func(s *S) {
		st := s.Create("seq-empty", CT(ctText))
		Expect(st.Append("a", RawH(hSeq, ""))).To(HaveStatus(400))
		Expect(st.Append("a", H(hSeq, "5"))).To(HaveStatus(204))
		Expect(st.Close(H(hSeq, "1"))).To(HaveStatus(204), "close-only does not judge Stream-Seq")
	})
})
