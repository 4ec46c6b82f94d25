package conformance

import (
	"bytes"
	"crypto/rand"

	. "github.com/onsi/gomega"
)

// Spec: base protocol §5.6 (digest §10), catch-up GET {stream}?offset=.
var _ = Section("5.6", "5.6 Catch-up read", func() {
	ConformanceIt(MUST, Reqs{"B-5.6-03", "B-5.6-05", "B-5.6-07", "B-10-02"}, "reads an empty stream as 200, empty, up-to-date, at its real start offset", func(s *S) {
		st := s.Create("empty", CT(ctText))
		tail := st.Head().Get(hNextOffset)
		r := st.Read(offsetStart)
		Expect(r).To(HaveStatus(200))
		Expect(r).To(HaveEmptyBody())
		Expect(r).To(BeTrueHeader(hUpToDate))
		Expect(r).To(HaveHeader(hNextOffset, tail))
		Expect(r.Get(hNextOffset)).To(BeOffset(), "-1 is never echoed")
		Expect(r).To(HaveNoHeader(hClosed))
	})

	ConformanceIt(MUST, Reqs{"B-5.6-01", "B-5.6-04", "B-5.6-05", "B-5.6-07"}, "reads the data with the stored content type, the tail, up-to-date and an ETag", func(s *S) {
		st := s.Create("read", CT(ctText))
		tail := st.MustAppend("hello world")
		r := st.Read(offsetStart)
		Expect(r).To(HaveStatus(200))
		Expect(r).To(HaveBody("hello world"))
		Expect(r).To(HaveHeader(hContentType, ctText))
		Expect(r).To(HaveHeader(hNextOffset, tail))
		Expect(r).To(BeTrueHeader(hUpToDate))
		Expect(r).To(HaveHeader(hETag, Not(BeEmpty())))
		Expect(r).To(HaveNoHeader(hClosed))
	})

	ConformanceIt(MUST, Reqs{"B-5.6-01", "B-8-03", "B-5.6-07"}, "treats an omitted offset like -1", func(s *S) {
		st := s.Create("no-offset", CT(ctText), Text("abc"))
		a, b := st.Read(""), st.Read(offsetStart)
		Expect(a).To(HaveStatus(200))
		Expect(a.Text()).To(Equal(b.Text()))
		Expect(a.Get(hNextOffset)).To(Equal(b.Get(hNextOffset)))
	})

	ConformanceIt(MUST, Reqs{"B-5.6-01", "B-8-01"}, "reads from a returned offset only the data after it", func(s *S) {
		st := s.Create("from-offset", CT(ctText))
		mid := st.MustAppend("first ")
		tail := st.MustAppend("second")
		r := st.Read(mid)
		Expect(r).To(HaveStatus(200))
		Expect(r).To(HaveBody("second"))
		Expect(r).To(HaveHeader(hNextOffset, tail))
	})

	ConformanceIt(MUST, Reqs{"B-5.6-03", "B-10-02"}, "answers a read at the tail of an open stream with 200, empty, up-to-date and the same offset", func(s *S) {
		st := s.Create("at-tail", CT(ctText))
		tail := st.MustAppend("data")
		r := st.Read(tail)
		Expect(r).To(HaveStatus(200))
		Expect(r).To(HaveEmptyBody())
		Expect(r).To(BeTrueHeader(hUpToDate))
		Expect(r).To(HaveHeader(hNextOffset, tail))
		Expect(r).To(HaveNoHeader(hClosed))
	})

	ConformanceIt(MUST, Reqs{"B-5.6-02"}, "answers a read of a missing stream with 404", func(s *S) {
		Expect(s.Stream("read-missing").Read(offsetStart)).To(HaveStatus(404))
	})

	ConformanceIt(MUST, Reqs{"B-5.6-08", "B-5.6-02"}, "rejects an empty or repeated offset parameter with 400", func(s *S) {
		st := s.Create("bad-offset-q", CT(ctText), Text("data"))
		Expect(st.Get(RawQ("offset="))).To(HaveStatus(400), "offset=")
		tail := st.Head().Get(hNextOffset)
		Expect(st.Get(Q("offset", offsetStart), Q("offset", tail))).To(HaveStatus(400), "two offset parameters")
	})

	ConformanceIt(MUST, Reqs{"B-5.6-08", "B-5.6-02"}, "rejects offsets with a comma, space, slash, NUL or line break with 400", func(s *S) {
		st := s.Create("bad-offset-chars", CT(ctText), Text("data"))
		tail := st.Head().Get(hNextOffset)
		for _, bad := range []string{"0,1", tail + ",x", "0 1", tail + " ", "0/1", tail + "/", "0\x001", "0\n1", "0\r\n1"} {
			Expect(st.Read(bad)).To(HaveStatus(400), "offset %q", bad)
		}
	})

	ConformanceIt(MUST, Reqs{"B-5.6-08", "B-5.6-02"}, "rejects an offset with a bad percent-escape or a trailing ';' with 400, not a read from the start", func(s *S) {
		st := s.Create("bad-offset-escape", CT(ctText), Text("data"))
		tail := st.Head().Get(hNextOffset)
		for _, raw := range []string{"offset=now%zz", "offset=" + tail + ";", "offset=%zz"} {
			r := st.Get(RawQ(raw))
			Expect(r).To(HaveStatus(400), "?%s", raw)
			Expect(r).NotTo(HaveBody("data"), "?%s", raw)
		}
	})

	ConformanceIt(MUST, Reqs{"B-5.6-06", "B-5.6-07", "B-5.6-05"}, "marks the read reaching a closed stream's final offset with Stream-Closed and up-to-date", func(s *S) {
		st := s.Create("closed-last", CT(ctText))
		st.MustAppend("final data")
		closed := st.MustClose()
		r := st.Read(offsetStart)
		Expect(r).To(HaveStatus(200))
		Expect(r).To(HaveBody("final data"))
		Expect(r).To(BeTrueHeader(hClosed))
		Expect(r).To(BeTrueHeader(hUpToDate))
		Expect(r).To(HaveHeader(hNextOffset, closed.Get(hNextOffset)))
	})

	ConformanceIt(MUST, Reqs{"B-5.6-03", "B-5.6-07", "B-5.7-07", "B-10-02"}, "answers a read at a closed stream's tail with the canonical EOF: 200, empty, Stream-Closed", func(s *S) {
		st := s.Create("eof", CT(ctText))
		st.MustAppend("data")
		tail := st.MustClose().Get(hNextOffset)
		r := st.Read(tail)
		Expect(r).To(HaveStatus(200))
		Expect(r).To(HaveEmptyBody())
		Expect(r).To(BeTrueHeader(hClosed))
		Expect(r).To(BeTrueHeader(hUpToDate))
		Expect(r).To(HaveHeader(hNextOffset, tail))
	})

	ConformanceIt(MUST, Reqs{"B-5.6-06"}, "does not mark reads of an open stream with Stream-Closed", func(s *S) {
		st := s.Create("open-read", CT(ctText))
		tail := st.MustAppend("data")
		Expect(st.Read(offsetStart)).To(HaveNoHeader(hClosed))
		Expect(st.Read(tail)).To(HaveNoHeader(hClosed))
	})

	ConformanceIt(MUST, Reqs{"B-5.6-09", "B-9-01"}, "reads 100 KiB of binary data back byte-exact following Stream-Next-Offset", func(s *S) {
		st := s.Create("paginate", CT(ctOctets))
		want := make([]byte, 100<<10)
		_, _ = rand.Read(want)
		for i := 0; i < len(want); i += 10 << 10 {
			r := st.AppendBytes(want[i : i+10<<10])
			Expect(r).To(HaveStatus(204))
		}
		got, last := st.CatchUp(offsetStart)
		Expect(bytes.Equal(got, want)).To(BeTrue(), "read back %d bytes, want %d identical bytes", len(got), len(want))
		Expect(last).To(HaveHeader(hNextOffset, st.Head().Get(hNextOffset)))
	})

	ConformanceIt(SHOULD, Reqs{"B-5.6-05", "B-5.6-06"}, "leaves up-to-date and Stream-Closed off chunk-limited partial reads", func(s *S) {
		st := s.Create("partial", CT(ctOctets))
		unit := bytes.Repeat([]byte{0xab}, 512<<10)
		for i := 0; i < 6; i++ {
			Expect(st.AppendBytes(unit)).To(HaveStatus(204))
		}
		tail := st.MustClose().Get(hNextOffset)
		offset, total := offsetStart, 0
		for i := 0; i < 100 && offset != tail; i++ {
			r := st.Read(offset)
			Expect(r).To(HaveStatus(200))
			total += len(r.Data)
			if next := r.Get(hNextOffset); next != tail {
				Expect(r).To(HaveNoHeader(hUpToDate), "a partial read (%d bytes, up to %q of %q) is not up-to-date", len(r.Data), next, tail)
				Expect(r).To(HaveNoHeader(hClosed), "a partial read (%d bytes) does not reach EOF", len(r.Data))
			} else {
				Expect(r).To(BeTrueHeader(hUpToDate))
				Expect(r).To(BeTrueHeader(hClosed))
			}
			offset = r.Get(hNextOffset)
		}
		Expect(total).To(Equal(6 * len(unit)))
	})

	ConformanceIt(MUST, Reqs{"B-9-01"}, "round-trips every byte value 0x00-0xFF", func(s *S) {
		st := s.Create("bytes", CT(ctOctets))
		all := make([]byte, 256)
		for i := range all {
			all[i] = byte(i)
		}
		Expect(st.AppendBytes(all)).To(HaveStatus(204))
		r := st.Read(offsetStart)
		Expect(r).To(HaveStatus(200))
		Expect(r.Data).To(Equal(all))
		Expect(r).To(HaveHeader(hContentType, ctOctets))
	})

	ConformanceIt(MUST, Reqs{"B-9-01", "B-5.6-07"}, "accepts and echoes arbitrary media types", func(s *S) {
		for _, ct := range []string{"application/x-protobuf", "application/ndjson", "application/vnd.example+json", "image/png"} {
			st := s.Create("media", CT(ct))
			Expect(st.AppendBytes([]byte{0, 1, 2, 0xff})).To(HaveStatus(204), "append to %s", ct)
			r := st.Read(offsetStart)
			Expect(r).To(HaveHeader(hContentType, ct))
			Expect(r.Data).To(Equal([]byte{0, 1, 2, 0xff}), "%s is byte-transparent", ct)
		}
	})
})
