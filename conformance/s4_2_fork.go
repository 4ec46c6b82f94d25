package conformance

import (
	"strings"

	"github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Fork headers (base protocol §4.2, digest §3), restated from the spec.
const (
	hForkedFrom    = "Stream-Forked-From"
	hForkOffset    = "Stream-Fork-Offset"
	hForkSubOffset = "Stream-Fork-Sub-Offset"
)

// forkOf names src in Stream-Forked-From (its URL path: /v1/stream/{name} on the flat
// surface, /{bucket}/{stream} on the bucketed one).
func forkOf(src *Stream) Opt { return H(hForkedFrom, src.Path) }

// forkAt sets Stream-Fork-Offset.
func forkAt(offset string) Opt { return H(hForkOffset, offset) }

// forkSub sets Stream-Fork-Sub-Offset.
func forkSub(n string) Opt { return H(hForkSubOffset, n) }

// mustFork creates a fork of src (opts add the other fork headers, a body or expiry) and
// fails the spec unless the server answers 201. The fork's content type is the source's.
func (s *S) mustFork(slug string, src *Stream, opts ...Opt) (*Stream, *Response) {
	ginkgo.GinkgoHelper()
	st := s.Stream(slug)
	r := st.Put(append([]Opt{forkOf(src)}, opts...)...)
	Expect(r).To(HaveStatus(201), "forking %s from %s: %s", st.URL, src.Path, r)
	st.ContentType = src.ContentType
	return st, r
}

// streamOfUnits creates an empty stream of type ct, then appends each unit with its own
// POST. offs[0] is the start offset (the create's Stream-Next-Offset) and offs[i] the tail
// after unit i: every offs[i] is a server-issued offset.
func (s *S) streamOfUnits(slug, ct string, units ...string) (*Stream, []string) {
	ginkgo.GinkgoHelper()
	st := s.Stream(slug)
	offs := []string{st.MustCreate(CT(ct)).Get(hNextOffset)}
	for _, u := range units {
		offs = append(offs, st.MustAppend(u))
	}
	return st, offs
}

// expectNotCreated checks that a rejected PUT left no stream behind.
func expectNotCreated(st *Stream, why string) {
	ginkgo.GinkgoHelper()
	Expect(st.Head()).To(HaveStatus(404), "a rejected fork (%s) must not create %s", why, st.Path)
}

// forkHeadersSeen lists every response of the spec's transcript that carried one of the
// fork request headers.
func (s *S) forkHeadersSeen() []string {
	s.c.tr.mu.Lock()
	ex := append([]*Exchange(nil), s.c.tr.ex...)
	s.c.tr.mu.Unlock()
	var out []string
	for _, e := range ex {
		for _, h := range []string{hForkedFrom, hForkOffset, hForkSubOffset} {
			if e.RespHeader != nil && len(e.RespHeader.Values(h)) > 0 {
				out = append(out, e.Method+" "+e.URL+": "+h+": "+strings.Join(e.RespHeader.Values(h), ","))
			}
		}
	}
	return out
}

// Spec: base protocol §4.2 (digest §3), creating forks: offsets, sub-offsets, content
// types, idempotency, inherited state; plus B-5.1-10, B-8-09, B-8-10.
var _ = Section("4.2", "4.2 Forking", Ext("fork"), func() {
	ConformanceIt(MUST, Reqs{"B-4.2-01", "B-4.2-02", "B-4.2-04", "B-8-10", "B-5.1-13"}, "forks at the source's tail by default: 201, the source's content type and the fork point as Stream-Next-Offset", func(s *S) {
		src, offs := s.streamOfUnits("fork-src", ctText, "ab", "cd")
		fork, r := s.mustFork("fork-default", src)
		Expect(r).To(HaveHeader(hContentType, ctText))
		Expect(r).To(HaveHeader(hNextOffset, offs[2]))
		read := fork.Read(offsetStart)
		Expect(read).To(HaveStatus(200))
		Expect(read).To(HaveBody("abcd"))
		Expect(read).To(HaveHeader(hNextOffset, offs[2]))
		Expect(read).To(BeTrueHeader(hUpToDate))
		Expect(fork.Head()).To(SatisfyAll(HaveStatus(200), HaveHeader(hContentType, ctText), HaveHeader(hNextOffset, offs[2])))
		empty := s.Create("fork-empty-src", CT(ctOctets))
		emptyFork, r := s.mustFork("fork-of-empty", empty)
		Expect(r).To(HaveHeader(hContentType, ctOctets))
		Expect(emptyFork.Read(offsetStart)).To(SatisfyAll(HaveStatus(200), HaveEmptyBody(), BeTrueHeader(hUpToDate)))
	})

	ConformanceIt(MUST, Reqs{"B-4.2-02", "B-4.2-12", "B-8-10"}, "inherits exactly the data before Stream-Fork-Offset at every offset of the source, and shares its offsets", func(s *S) {
		units := []string{"a", "bb", "ccc"}
		src, offs := s.streamOfUnits("fork-at-src", ctText, units...)
		for i := range offs {
			fork, r := s.mustFork("fork-at", src, forkAt(offs[i]))
			Expect(r).To(HaveHeader(hNextOffset, offs[i]), "a fork at offset #%d ends there", i)
			want := strings.Join(units[:i], "")
			read := fork.Read(offsetStart)
			Expect(read).To(SatisfyAll(HaveStatus(200), HaveBody(want), HaveHeader(hNextOffset, offs[i]), BeTrueHeader(hUpToDate)), "fork at offset #%d", i)
			for j := 0; j < i; j++ {
				Expect(fork.Read(offs[j])).To(HaveBody(strings.Join(units[j:i], "")), "the fork's read at the source's offset #%d", j)
			}
			Expect(fork.Read(offs[i])).To(SatisfyAll(HaveStatus(200), HaveEmptyBody(), BeTrueHeader(hUpToDate)))
		}
		Expect(src.Read(offsetStart)).To(HaveBody("abbccc"))
	})

	ConformanceIt(MUST, Reqs{"B-4.2-12", "B-4.2-06", "B-5.1-10"}, "rejects a fork offset beyond the source's tail with 400", func(s *S) {
		src := s.Create("fork-beyond-src", CT(ctText), Text("a"))
		ahead, _ := s.mustFork("fork-ahead", src)
		beyond := ahead.MustAppend("more data")
		st := s.Stream("fork-beyond")
		Expect(st.Put(forkOf(src), forkAt(beyond))).To(HaveStatus(400), "a server-issued offset of the shared offset space, beyond the source's tail")
		expectNotCreated(st, "offset beyond the tail")
	})

	ConformanceIt(MUST, Reqs{"B-4.2-06"}, "rejects a malformed fork offset with 400", func(s *S) {
		src := s.Create("fork-malformed-src", CT(ctText), Text("a"))
		for _, bad := range []string{"a,b", "a&b", "a=b", "a?b", "a/b"} {
			st := s.Stream("fork-malformed")
			Expect(st.Put(forkOf(src), forkAt(bad))).To(HaveStatus(400), "Stream-Fork-Offset: %q", bad)
			expectNotCreated(st, "malformed offset")
		}
	})

	ConformanceIt(MUST, Reqs{"B-4.2-06", "B-5.1-12"}, "answers a fork of a missing source with 404", func(s *S) {
		missing := s.Stream("fork-no-source")
		st := s.Stream("fork-orphan")
		Expect(st.Put(forkOf(missing), CT(ctText))).To(HaveStatus(404))
		expectNotCreated(st, "missing source")
	})

	ConformanceIt(MUST, Reqs{"B-4.2-04", "B-4.2-06"}, "inherits the content type when omitted, accepts the source's type in any case, and answers 409 to another type", func(s *S) {
		src := s.Create("fork-ct-src", CT(ctJSON), Text(`[{"a":1}]`))
		inherited, r := s.mustFork("fork-ct-inherit", src)
		Expect(r).To(HaveMediaType(ctJSON))
		Expect(inherited.Head()).To(HaveMediaType(ctJSON))
		Expect(inherited.Append(`{"b":2}`, CT(ctJSON))).To(HaveStatus(204))
		Expect(inherited.Read(offsetStart)).To(HaveBody(`[{"a":1},{"b":2}]`))
		_, r = s.mustFork("fork-ct-same", src, CT("APPLICATION/JSON"))
		Expect(r).To(HaveMediaType(ctJSON))
		for _, other := range []string{ctText, ctOctets} {
			st := s.Stream("fork-ct-other")
			Expect(st.Put(forkOf(src), CT(other))).To(HaveStatus(409), "Content-Type %s on a fork of an application/json stream", other)
			expectNotCreated(st, "content-type mismatch")
		}
	})

	ConformanceIt(MUST, Reqs{"B-4.2-07", "B-4.2-16", "B-4.2-06", "B-4.2-04"}, "answers a repeated fork PUT with 200 when it matches and 409 when it does not", func(s *S) {
		src, offs := s.streamOfUnits("fork-idem-src", ctText, "one", "two")
		other := s.Create("fork-idem-other", CT(ctText), Text("x"))
		fork, _ := s.mustFork("fork-idem", src, CT(ctText), forkAt(offs[1]))
		again := fork.Put(forkOf(src), CT(ctText), forkAt(offs[1]))
		Expect(again).To(SatisfyAll(HaveStatus(200), HaveHeader(hNextOffset, offs[1]), HaveHeader(hContentType, ctText)))
		Expect(fork.Put(forkOf(src), CT(ctText), forkAt(offs[0]))).To(HaveStatus(409), "another fork offset")
		Expect(fork.Put(forkOf(other), CT(ctText), forkAt(offs[1]))).To(HaveStatus(409), "another source")
		Expect(fork.Put(forkOf(src), CT(ctJSON), forkAt(offs[1]))).To(HaveStatus(409), "another content type")
		Expect(fork.Read(offsetStart)).To(HaveBody("one"), "repeated PUTs change nothing")
		byDefault, _ := s.mustFork("fork-idem-default", src, CT(ctText))
		Expect(byDefault.Put(forkOf(src), CT(ctText))).To(SatisfyAll(HaveStatus(200), HaveHeader(hNextOffset, offs[2])), "identical headers without Stream-Fork-Offset")
		plain := s.Create("fork-idem-plain", CT(ctText))
		Expect(plain.Put(forkOf(src), CT(ctText))).To(HaveStatus(409), "a fork PUT on an existing stream that is not that fork")
		Expect(plain.Read(offsetStart)).To(HaveBody(""))
		inherited, _ := s.mustFork("fork-idem-inherit", src)
		Expect(inherited.Put(forkOf(src))).To(HaveStatus(200), "a repeat that again omits Content-Type (inherited, B-4.2-04)")
		Expect(inherited.Put(forkOf(src), CT(ctText))).To(HaveStatus(200), "a repeat naming the inherited Content-Type")
	})

	ConformanceIt(MUST, Reqs{"B-4.2-16", "B-4.2-07"}, "compares sub-offsets on a repeated fork PUT: same 200, different 409, absent equal to 0", func(s *S) {
		src, offs := s.streamOfUnits("fork-sub-idem-src", ctText, "hello")
		fork, _ := s.mustFork("fork-sub-idem", src, CT(ctText), forkAt(offs[0]), forkSub("2"))
		Expect(fork.Put(forkOf(src), CT(ctText), forkAt(offs[0]), forkSub("2"))).To(HaveStatus(200))
		Expect(fork.Put(forkOf(src), CT(ctText), forkAt(offs[0]), forkSub("3"))).To(HaveStatus(409))
		Expect(fork.Put(forkOf(src), CT(ctText), forkAt(offs[0]))).To(HaveStatus(409), "no sub-offset is sub-offset 0, not 2")
		Expect(fork.Read(offsetStart)).To(HaveBody("he"))
		absent, _ := s.mustFork("fork-sub-absent", src, CT(ctText), forkAt(offs[0]))
		Expect(absent.Put(forkOf(src), CT(ctText), forkAt(offs[0]), forkSub("0"))).To(HaveStatus(200))
		zero, _ := s.mustFork("fork-sub-zero", src, CT(ctText), forkAt(offs[0]), forkSub("0"))
		Expect(zero.Put(forkOf(src), CT(ctText), forkAt(offs[0]))).To(HaveStatus(200))
		Expect(zero.Read(offsetStart)).To(HaveBody(""))
	})

	ConformanceIt(MAY, Reqs{"B-4.2-08"}, "forks a closed stream; the fork starts open", func(s *S) {
		src := s.Create("fork-closed-src", CT(ctText), Text("closed data"))
		final := src.MustClose().Get(hNextOffset)
		fork, r := s.mustFork("fork-of-closed", src)
		Expect(r).To(HaveNoHeader(hClosed))
		Expect(r).To(HaveHeader(hNextOffset, final))
		read := fork.Read(offsetStart)
		Expect(read).To(SatisfyAll(HaveBody("closed data"), BeTrueHeader(hUpToDate), HaveNoHeader(hClosed)))
		Expect(fork.Head()).To(HaveNoHeader(hClosed))
		Expect(fork.Append(" and more")).To(HaveStatus(204))
		Expect(fork.Read(offsetStart)).To(HaveBody("closed data and more"))
		Expect(src.Append("x")).To(HaveStatus(409), "the source stays closed")
	})

	ConformanceIt(MUST, Reqs{"B-4.2-18", "B-4-04"}, "closes a fork and its source independently", func(s *S) {
		src := s.Create("fork-close-src", CT(ctText), Text("base"))
		fork, _ := s.mustFork("fork-close", src)
		src.MustClose()
		Expect(fork.Head()).To(HaveNoHeader(hClosed))
		Expect(fork.Append("+fork")).To(HaveStatus(204))
		other, _ := s.mustFork("fork-close-other", fork)
		fork.MustClose()
		Expect(other.Append("+other")).To(HaveStatus(204))
		Expect(other.Read(offsetStart)).To(SatisfyAll(HaveBody("base+fork+other"), HaveNoHeader(hClosed)))
		Expect(fork.Read(offsetStart)).To(SatisfyAll(HaveBody("base+fork"), BeTrueHeader(hClosed)))
	})

	ConformanceIt(MUST, Reqs{"B-4.2-09", "B-4.2-17"}, "inherits no producer or Stream-Seq state, and leaves the source's untouched", func(s *S) {
		src := s.Create("fork-state-src", CT(ctText))
		Expect(src.Append("hello", producer("fork-p", 0, 0))).To(HaveStatus(200))
		Expect(src.Append("world", producer("fork-p", 0, 1))).To(HaveStatus(200))
		Expect(src.Append("!", H(hSeq, "5"))).To(HaveStatus(204))
		fork, _ := s.mustFork("fork-state", src)
		first := fork.Append("X", producer("fork-p", 0, 0))
		Expect(first).To(HaveStatus(200), "the source's (epoch 0, seq 0) is new on the fork")
		Expect(first).To(HaveHeader(hProducerSeq, "0"))
		Expect(fork.Append("Y", producer("fork-p", 0, 1))).To(HaveStatus(200))
		Expect(fork.Append("Z", H(hSeq, "1"))).To(HaveStatus(204), "the source's Stream-Seq 5 does not bind the fork")
		Expect(fork.Read(offsetStart)).To(HaveBody("helloworld!XYZ"))
		Expect(src.Append("world", producer("fork-p", 0, 1))).To(HaveStatus(204), "the source still knows its producer")
		Expect(src.Append("?", H(hSeq, "4"))).To(HaveStatus(409), "the source still knows its Stream-Seq")
		Expect(src.Read(offsetStart)).To(HaveBody("helloworld!"))
	})

	ConformanceIt(MUST, Reqs{"B-4.2-17", "B-4.2-09", "B-4.2-03"}, "inherits no producer state when a sub-offset splits a producer's append (bytes and JSON)", func(s *S) {
		src := s.Create("fork-split-src", CT(ctText))
		start := src.Head().Get(hNextOffset)
		Expect(src.Append("hello", producer("fork-p", 0, 0))).To(HaveStatus(200))
		fork, _ := s.mustFork("fork-split", src, forkAt(start), forkSub("3"))
		Expect(fork.Append("LO", producer("fork-p", 0, 0))).To(HaveStatus(200))
		Expect(fork.Read(offsetStart)).To(HaveBody("helLO"))

		jsrc := s.Create("fork-split-json-src", CT(ctJSON))
		jstart := jsrc.Head().Get(hNextOffset)
		Expect(jsrc.Append(`[{"i":1},{"i":2},{"i":3}]`, producer("fork-p", 0, 0))).To(HaveStatus(200))
		jfork, _ := s.mustFork("fork-split-json", jsrc, forkAt(jstart), forkSub("1"))
		Expect(jfork.Append(`[{"i":99}]`, producer("fork-p", 0, 0))).To(HaveStatus(200))
		Expect(arrayValues(jfork.Read(offsetStart).Data)).To(Equal([]string{`{"i":1}`, `{"i":99}`}))
	})

	ConformanceIt(MUST, Reqs{"B-4.2-03", "B-4.2-14", "B-4.2-06"}, "moves the divergence point by Stream-Fork-Sub-Offset bytes within the append unit at the anchor", func(s *S) {
		src, offs := s.streamOfUnits("fork-sub-src", ctText, "hello", "world")
		cases := []struct {
			anchor int
			sub    string
			want   string // "" with ok false: 400
			ok     bool
		}{
			{0, "3", "hel", true},
			{0, "5", "hello", true},
			{0, "6", "", false},
			{0, "0", "", true},
			{1, "3", "hellowor", true},
			{1, "5", "helloworld", true},
			{1, "6", "", false},
			{2, "1", "", false},
		}
		for _, c := range cases {
			st := s.Stream("fork-sub")
			r := st.Put(forkOf(src), forkAt(offs[c.anchor]), forkSub(c.sub))
			if !c.ok {
				Expect(r).To(HaveStatus(400), "sub-offset %s at offset #%d", c.sub, c.anchor)
				expectNotCreated(st, "sub-offset past the append unit")
				continue
			}
			Expect(r).To(HaveStatus(201), "sub-offset %s at offset #%d", c.sub, c.anchor)
			Expect(st.Read(offsetStart)).To(HaveBody(c.want), "sub-offset %s at offset #%d", c.sub, c.anchor)
		}
	})

	ConformanceIt(MUST, Reqs{"B-4.2-03", "B-4.2-14", "B-4.2-06"}, "counts a JSON sub-offset in flattened messages of the batch at the anchor", func(s *S) {
		src, offs := s.streamOfUnits("fork-jsub-src", ctJSON, `[{"a":1},{"b":2},{"c":3},{"d":4}]`, `[{"e":5},{"f":6},{"g":7}]`)
		all := []string{`{"a":1}`, `{"b":2}`, `{"c":3}`, `{"d":4}`, `{"e":5}`, `{"f":6}`, `{"g":7}`}
		cases := []struct {
			anchor int
			sub    string
			n      int // messages inherited; -1: 400
		}{
			{0, "2", 2}, {0, "4", 4}, {0, "5", -1}, {1, "3", 7}, {1, "4", -1}, {1, "1", 5},
		}
		for _, c := range cases {
			st := s.Stream("fork-jsub")
			r := st.Put(forkOf(src), forkAt(offs[c.anchor]), forkSub(c.sub))
			if c.n < 0 {
				Expect(r).To(HaveStatus(400), "sub-offset %s at offset #%d", c.sub, c.anchor)
				expectNotCreated(st, "JSON sub-offset past the batch")
				continue
			}
			Expect(r).To(HaveStatus(201), "sub-offset %s at offset #%d", c.sub, c.anchor)
			read := st.Read(offsetStart)
			Expect(read).To(HaveMediaType(ctJSON))
			Expect(arrayValues(read.Data)).To(Equal(all[:c.n]), "sub-offset %s at offset #%d", c.sub, c.anchor)
		}
	})

	ConformanceIt(MUST, Reqs{"B-4.2-13", "B-5.1-10"}, "rejects sub-offsets without a fork, without an anchor, malformed, or on an empty source with 400", func(s *S) {
		src, offs := s.streamOfUnits("fork-sub-bad-src", ctText, "data")
		empty := s.Stream("fork-sub-empty-src")
		emptyStart := empty.MustCreate(CT(ctText)).Get(hNextOffset)
		cases := []struct {
			what string
			opts []Opt
		}{
			{"Stream-Fork-Sub-Offset 0 without Stream-Forked-From", []Opt{CT(ctText), forkSub("0")}},
			{"Stream-Fork-Sub-Offset 2 without Stream-Forked-From", []Opt{CT(ctText), forkSub("2")}},
			{"a sub-offset > 0 without Stream-Fork-Offset", []Opt{forkOf(src), forkSub("1")}},
			{"a sub-offset > 0 on an empty source", []Opt{forkOf(empty), forkAt(emptyStart), forkSub("1")}},
		}
		for _, bad := range []string{"-1", "abc", "1.5", "05", "+1"} {
			cases = append(cases, struct {
				what string
				opts []Opt
			}{"Stream-Fork-Sub-Offset: " + bad, []Opt{forkOf(src), forkAt(offs[0]), forkSub(bad)}})
		}
		for _, c := range cases {
			st := s.Stream("fork-sub-bad")
			Expect(st.Put(c.opts...)).To(HaveStatus(400), c.what)
			expectNotCreated(st, c.what)
		}
	})

	// The spec leaves open what an empty fork header means (absent, or malformed) and what
	// a Stream-Fork-Offset without Stream-Forked-From does (the reference servers ignore
	// it and create a plain stream): dsd rejects all three.
	ConformanceIt(MUST, Reqs{"B-4.2-06", "B-4.2-13", "B-5.1-10"}, "rejects an empty Stream-Fork-Offset or Stream-Fork-Sub-Offset, and a fork offset without Stream-Forked-From, with 400", Profile("dsd"), func(s *S) {
		src, offs := s.streamOfUnits("fork-empty-src", ctText, "data")
		for _, c := range []struct {
			what string
			opts []Opt
		}{
			{"Stream-Fork-Offset: \"\"", []Opt{forkOf(src), forkAt("")}},
			{"Stream-Fork-Sub-Offset: \"\"", []Opt{forkOf(src), forkAt(offs[0]), forkSub("")}},
			{"Stream-Fork-Offset without Stream-Forked-From", []Opt{CT(ctText), forkAt(offs[0])}},
		} {
			st := s.Stream("fork-empty")
			Expect(st.Put(c.opts...)).To(HaveStatus(400), c.what)
			expectNotCreated(st, c.what)
		}
	})

	ConformanceIt(MUST, Reqs{"B-4.2-15", "B-8-09", "B-5.1-11"}, "makes the sub-offset prefix the fork's first append unit, puts an initial body after it, and never shows the sub-offset", func(s *S) {
		src, offs := s.streamOfUnits("fork-prefix-src", ctText, "abcdef")
		l1, r1 := s.mustFork("fork-prefix-l1", src, forkAt(offs[0]), forkSub("4"))
		Expect(l1.Read(offsetStart)).To(HaveBody("abcd"))
		l2, _ := s.mustFork("fork-prefix-l2", l1, forkAt(offs[0]), forkSub("2"))
		Expect(l2.Read(offsetStart)).To(HaveBody("ab"))
		l2.MustAppend("Z")
		Expect(l2.Read(offsetStart)).To(HaveBody("abZ"))
		over := s.Stream("fork-prefix-over")
		Expect(over.Put(forkOf(l1), forkAt(offs[0]), forkSub("5"))).To(HaveStatus(400), "l1's first append unit is the 4-byte prefix")
		expectNotCreated(over, "sub-offset past the materialized prefix")

		withBody, r := s.mustFork("fork-prefix-body", src, forkAt(offs[0]), forkSub("3"), CT(ctText), Text("XY"))
		Expect(withBody.Read(offsetStart)).To(HaveBody("abcXY"))
		tail := r.Get(hNextOffset)
		Expect(tail).To(BeOffset())
		Expect(withBody.Read(tail)).To(SatisfyAll(HaveStatus(200), HaveEmptyBody(), BeTrueHeader(hUpToDate)))
		withBody.MustAppend("LO")
		Expect(withBody.Read(tail)).To(HaveBody("LO"))
		Expect(withBody.Read(offsetStart)).To(HaveBody("abcXYLO"))
		Expect(l1.Read(r1.Get(hNextOffset))).To(SatisfyAll(HaveStatus(200), HaveEmptyBody(), BeTrueHeader(hUpToDate)))
		Expect(s.forkHeadersSeen()).To(BeEmpty())
	})
})
