package conformance

import (
	"encoding/json"
	"strings"

	"github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// attrsURL is {stream}/attrs.
func (st *Stream) attrsURL() string { return st.Ext + "/attrs" }

// GetAttrs sends GET {stream}/attrs.
func (st *Stream) GetAttrs() *Response {
	ginkgo.GinkgoHelper()
	return st.s.Do("GET", st.attrsURL())
}

// PutAttrs sends PUT {stream}/attrs with body, as application/json unless opts change it.
func (st *Stream) PutAttrs(body string, opts ...Opt) *Response {
	ginkgo.GinkgoHelper()
	return st.s.Do("PUT", st.attrsURL(), append([]Opt{CT(ctJSON), Text(body)}, opts...)...)
}

// MustPutAttrs replaces the attributes and fails the spec unless the server answers 204.
func (st *Stream) MustPutAttrs(body string) {
	ginkgo.GinkgoHelper()
	Expect(st.PutAttrs(body)).To(HaveStatus(204), "PUT attrs %s", body)
}

// MustAttrs expects GET {stream}/attrs to answer 200 application/json with a JSON object
// and returns it, canonicalized (keys sorted) for exact comparison with canonicalJSON.
func (st *Stream) MustAttrs() string {
	ginkgo.GinkgoHelper()
	r := st.GetAttrs()
	Expect(r).To(HaveStatus(200))
	Expect(r).To(HaveMediaType(ctJSON))
	var obj map[string]any
	Expect(json.Unmarshal(r.Data, &obj)).To(Succeed(), "attrs body %q is not a JSON object", r.Text())
	Expect(obj).NotTo(BeNil(), "attrs body %q is not a JSON object", r.Text())
	return canonicalJSON(r.Data)
}

// canonicalJSON re-encodes a JSON document with sorted keys and compact spacing.
func canonicalJSON(b []byte) string {
	ginkgo.GinkgoHelper()
	var v any
	Expect(json.Unmarshal(b, &v)).To(Succeed(), "%q is not JSON", b)
	out, err := json.Marshal(v)
	Expect(err).NotTo(HaveOccurred())
	return string(out)
}

// canon is canonicalJSON for a literal.
func canon(s string) string {
	ginkgo.GinkgoHelper()
	return canonicalJSON([]byte(s))
}

// sizedAttrs is an attribute object whose compact, key-sorted encoding is exactly n bytes.
func sizedAttrs(n int) string {
	const frame = `{"metadata":{"blob":""}}`
	return `{"metadata":{"blob":"` + strings.Repeat("x", n-len(frame)) + `"}}`
}

// streamView is what attributes must never change (extension §5): the tail, content
// type, closure, body and ETag of a read from the start.
type streamView struct {
	Tail, ContentType, Closed, Body, ETag string
}

func (st *Stream) view() streamView {
	ginkgo.GinkgoHelper()
	h := st.Head()
	Expect(h).To(HaveStatus(200))
	r := st.Read(offsetStart)
	Expect(r).To(HaveStatus(200))
	return streamView{Tail: h.Get(hNextOffset), ContentType: h.Get(hContentType), Closed: h.Get(hClosed), Body: r.Text(), ETag: r.Get(hETag)}
}

const supportAttrs = `{"title":"Support session","metadata":{"purpose":"customer-support","agent":{"id":"agent_1","version":2}}}`

// Spec: extension §5 (stream attributes).
var _ = Section("x5", "X5 Stream attributes", Ext("attrs"), func() {
	ConformanceIt(MUST, Reqs{"X-5.3-01", "X-5.3-02"}, "answers GET attrs with 200 application/json {} when none are set, 404 for a missing stream", func(s *S) {
		st := s.Create("attrs-none", CT(ctText))
		Expect(st.MustAttrs()).To(Equal("{}"))
		Expect(s.Stream("attrs-missing").GetAttrs()).To(HaveStatus(404))
	})

	ConformanceIt(MAY, Reqs{"X-5.2-01", "X-5.3-01"}, "stores the Stream-Attrs given on create", func(s *S) {
		st := s.Create("attrs-create", CT(ctText), H(hStreamAttrs, supportAttrs))
		Expect(st.MustAttrs()).To(Equal(canon(supportAttrs)))
	})

	ConformanceIt(MUST, Reqs{"X-5.2-02"}, "answers 200 to a re-create with the same attributes and 409 to different or missing ones", func(s *S) {
		st := s.Create("attrs-recreate", CT(ctText), H(hStreamAttrs, supportAttrs))
		Expect(st.Put(CT(ctText), H(hStreamAttrs, supportAttrs))).To(HaveStatus(200))
		Expect(st.Put(CT(ctText), H(hStreamAttrs, `{"title":"Other"}`))).To(HaveStatus(409), "different attributes")
		Expect(st.Put(CT(ctText))).To(HaveStatus(409), "no attributes")
		Expect(st.Put(CT(ctText), H(hStreamAttrs, `{}`))).To(HaveStatus(409), "{} (no attributes)")
		Expect(st.MustAttrs()).To(Equal(canon(supportAttrs)), "a refused re-create keeps the attributes")

		plain := s.Create("attrs-recreate-plain", CT(ctText))
		Expect(plain.Put(CT(ctText), H(hStreamAttrs, `{"title":"t"}`))).To(HaveStatus(409), "attributes where none were set")
		Expect(plain.MustAttrs()).To(Equal("{}"))
	})

	ConformanceIt(MUST, Reqs{"X-5.2-02", "X-5.1-07"}, "treats Stream-Attrs {} as no attributes on create and re-create", func(s *S) {
		st := s.Create("attrs-empty", CT(ctText), H(hStreamAttrs, `{}`))
		Expect(st.MustAttrs()).To(Equal("{}"))
		Expect(st.Put(CT(ctText))).To(HaveStatus(200), "re-create without Stream-Attrs")
		Expect(st.Put(CT(ctText), H(hStreamAttrs, `{}`))).To(HaveStatus(200), "re-create with {}")
		Expect(st.Put(CT(ctText), H(hStreamAttrs, `{"title":"x"}`))).To(HaveStatus(409))

		plain := s.Create("attrs-empty-plain", CT(ctText))
		Expect(plain.Put(CT(ctText), H(hStreamAttrs, `{}`))).To(HaveStatus(200), "{} matches a stream created without attributes")
	})

	ConformanceIt(MUST, Reqs{"X-5.1-03", "X-5.2-02"}, "accepts unknown top-level fields, never stores them, and ignores them in create idempotency", func(s *S) {
		st := s.Create("attrs-unknown", CT(ctText), H(hStreamAttrs, `{"title":"t","color":"red"}`))
		Expect(st.MustAttrs()).To(Equal(`{"title":"t"}`))
		Expect(st.Put(CT(ctText), H(hStreamAttrs, `{"title":"t"}`))).To(HaveStatus(200))
		Expect(st.Put(CT(ctText), H(hStreamAttrs, `{"title":"t","color":"blue","size":3}`))).To(HaveStatus(200))
		st.MustPutAttrs(`{"title":"u","extra":[1,2],"metadata":{"kept":{"nested":true}}}`)
		Expect(st.MustAttrs()).To(Equal(canon(`{"title":"u","metadata":{"kept":{"nested":true}}}`)), "unknown fields inside metadata are application data")

		only := s.Create("attrs-unknown-only", CT(ctText), H(hStreamAttrs, `{"color":"red"}`))
		Expect(only.MustAttrs()).To(Equal("{}"), "only unknown fields: nothing stored")
		Expect(only.Put(CT(ctText))).To(HaveStatus(200))
	})

	ConformanceIt(MUST, Reqs{"X-5.4-01", "X-5.4-02"}, "replaces the whole attribute object on PUT, with no merge", func(s *S) {
		st := s.Create("attrs-replace", CT(ctText), H(hStreamAttrs, `{"title":"a","metadata":{"x":1,"y":{"z":2}}}`))
		st.MustPutAttrs(`{"metadata":{"y":{"w":3}}}`)
		Expect(st.MustAttrs()).To(Equal(canon(`{"metadata":{"y":{"w":3}}}`)))
		st.MustPutAttrs(`{"title":"b"}`)
		Expect(st.MustAttrs()).To(Equal(`{"title":"b"}`))
		Expect(st.Put(CT(ctText), H(hStreamAttrs, `{"title":"b"}`))).To(HaveStatus(200), "re-create compares with the replaced attributes")
	})

	ConformanceIt(MUST, Reqs{"X-5.4-03", "X-5.4-02", "X-5.1-07"}, "clears the attributes with {}", func(s *S) {
		st := s.Create("attrs-clear", CT(ctText), H(hStreamAttrs, supportAttrs))
		st.MustPutAttrs(`{}`)
		Expect(st.MustAttrs()).To(Equal("{}"))
		Expect(st.Put(CT(ctText))).To(HaveStatus(200), "a re-create without attributes matches")
	})

	ConformanceIt(MUST, Reqs{"X-5.4-02"}, "answers 204 to a PUT that matches the stored attributes", func(s *S) {
		st := s.Create("attrs-same", CT(ctText), H(hStreamAttrs, supportAttrs))
		st.MustPutAttrs(supportAttrs)
		st.MustPutAttrs(supportAttrs)
		Expect(st.MustAttrs()).To(Equal(canon(supportAttrs)))
	})

	ConformanceIt(MUST, Reqs{"X-5.4-02"}, "answers 400 to PUT attrs without Content-Type or with a non-JSON one", func(s *S) {
		st := s.Create("attrs-ct", CT(ctText), H(hStreamAttrs, `{"title":"keep"}`))
		Expect(st.PutAttrs(`{"title":"x"}`, NoCT())).To(HaveStatus(400), "no Content-Type")
		for _, ct := range []string{ctText, "application/x-www-form-urlencoded", "application/ndjson", "text/json"} {
			Expect(st.PutAttrs(`{"title":"x"}`, CT(ct))).To(HaveStatus(400), "Content-Type %s", ct)
		}
		Expect(st.MustAttrs()).To(Equal(`{"title":"keep"}`))
		Expect(st.PutAttrs(`{"title":"y"}`, CT("application/json; charset=utf-8"))).To(HaveStatus(204), "application/json with a parameter")
		Expect(st.MustAttrs()).To(Equal(`{"title":"y"}`))
	})

	ConformanceIt(MUST, Reqs{"X-5.4-02", "X-5.1-01"}, "answers 400 to a body that is not an attribute object", func(s *S) {
		st := s.Create("attrs-invalid", CT(ctText), H(hStreamAttrs, `{"title":"keep"}`))
		for _, bad := range []string{
			``, `[]`, `[{"title":"x"}]`, `"title"`, `1`, `null`, `true`, `{`, `{"title":"x"} {}`, `{"title":"x"}]`,
			`{"title":1}`, `{"title":["x"]}`, `{"title":{"x":1}}`, `{"metadata":"x"}`, `{"metadata":[1]}`, `{"metadata":3}`,
		} {
			Expect(st.PutAttrs(bad)).To(HaveStatus(400), "body %q", bad)
		}
		Expect(st.MustAttrs()).To(Equal(`{"title":"keep"}`), "rejected bodies change nothing")
	})

	ConformanceIt(MUST, Reqs{"X-5.1-01", "X-5.2-02"}, "answers 400 to a create whose Stream-Attrs is not an attribute object, creating nothing", func(s *S) {
		for i, bad := range []string{`[]`, `"x"`, `{"title":1}`, `{"metadata":"x"}`, `{`, `{"title":"x"}]`} {
			st := s.Stream("attrs-create-invalid")
			Expect(st.Put(CT(ctText), H(hStreamAttrs, bad))).To(HaveStatus(400), "Stream-Attrs %q (%d)", bad, i)
			Expect(st.Head()).To(HaveStatus(404))
		}
	})

	ConformanceIt(MUST, Reqs{"X-5.1-05", "X-5.1-06", "X-5.4-02"}, "answers 400 to attributes over 16 KiB, on PUT and on create, and accepts 12 KiB", func(s *S) {
		st := s.Create("attrs-size", CT(ctText))
		big := sizedAttrs(17 << 10)
		Expect(st.PutAttrs(big)).To(HaveStatus(400))
		Expect(st.MustAttrs()).To(Equal("{}"))
		fits := sizedAttrs(12 << 10)
		st.MustPutAttrs(fits)
		Expect(st.MustAttrs()).To(Equal(canon(fits)))

		// A 17 KiB header may already be refused by the HTTP layer (431); either way the
		// create must fail.
		fresh := s.Stream("attrs-size-create")
		Expect(fresh.Put(CT(ctText), H(hStreamAttrs, big))).To(HaveStatus(400, 431))
		Expect(fresh.Head()).To(HaveStatus(404))
	})

	ConformanceIt(MUST, Reqs{"X-5.1-05", "X-5.1-06"}, "measures the 16 KiB limit on the stored compact form: 16384 bytes accepted, 16385 refused (D5)", Profile("dsd"), func(s *S) {
		st := s.Create("attrs-limit", CT(ctText))
		Expect(st.PutAttrs(sizedAttrs(16385))).To(HaveStatus(400))
		exact := sizedAttrs(16384)
		st.MustPutAttrs(exact)
		r := st.GetAttrs()
		Expect(r).To(HaveBody(exact), "the stored form is the compact, key-sorted object")
		Expect(st.PutAttrs(`{"title":"t",  "metadata": {"b":1, "a":2}, "unknown": true}`)).To(HaveStatus(204))
		Expect(st.GetAttrs()).To(HaveBody(`{"metadata":{"a":2,"b":1},"title":"t"}`))
	})

	ConformanceIt(MUST, Reqs{"X-5.2-02", "X-5.1-07"}, "compares attributes on re-create up to key order and treats null fields as absent", Profile("dsd"), func(s *S) {
		st := s.Create("attrs-order", CT(ctText), H(hStreamAttrs, `{"title":"t","metadata":{"b":1,"a":{"d":2,"c":3}}}`))
		Expect(st.Put(CT(ctText), H(hStreamAttrs, `{"metadata":{"a":{"c":3,"d":2},"b":1},"title":"t"}`))).To(HaveStatus(200))
		Expect(st.Put(CT(ctText), H(hStreamAttrs, `{"metadata":{"a":{"c":3,"d":2},"b":1},"title":"t","unknown":null}`))).To(HaveStatus(200))
		nulls := s.Create("attrs-null", CT(ctText), H(hStreamAttrs, `{"title":null,"metadata":null}`))
		Expect(nulls.GetAttrs()).To(HaveBody("{}"))
		Expect(nulls.Put(CT(ctText))).To(HaveStatus(200))
	})

	ConformanceIt(MUST, Reqs{"X-5.4-02"}, "answers PUT attrs on a missing stream with 404", func(s *S) {
		st := s.Stream("attrs-put-missing")
		Expect(st.PutAttrs(`{"title":"x"}`)).To(HaveStatus(404))
		Expect(st.Head()).To(HaveStatus(404), "PUT attrs never creates the stream")
	})

	ConformanceIt(MAY, Reqs{"X-5.4-04"}, "updates attributes after the stream is closed, which stays closed", func(s *S) {
		st := s.Create("attrs-closed", CT(ctText), Text("x"))
		st.MustClose()
		st.MustPutAttrs(`{"title":"archived"}`)
		Expect(st.MustAttrs()).To(Equal(`{"title":"archived"}`))
		Expect(st.Head()).To(BeTrueHeader(hClosed))
		Expect(st.Append("y")).To(HaveStatus(409))
	})

	ConformanceIt(MUST, Reqs{"X-5-01"}, "leaves offsets, ETag, content type, closure and reads unchanged when attributes change", func(s *S) {
		st := s.Create("attrs-invariant", CT(ctText), Text("hello|"))
		st.MustAppend("world|")
		before := st.view()
		st.MustPutAttrs(supportAttrs)
		Expect(st.view()).To(Equal(before), "after setting attributes")
		Expect(st.Read(offsetStart, H(hIfNoneMatch, before.ETag))).To(HaveStatus(304), "the old ETag still matches")
		Expect(st.LongPoll(offsetStart)).To(HaveBody("hello|world|"))
		evs, c := st.sseCatchUp(offsetStart)
		c.Close()
		Expect(strings.Join(DataEvents(evs), "")).To(Equal("hello|world|"))
		Expect(lastControl(evs).NextOffset).To(Equal(before.Tail))

		st.MustClose()
		closed := st.view()
		st.MustPutAttrs(`{}`)
		Expect(st.view()).To(Equal(closed), "after clearing attributes on the closed stream")
	})

	ConformanceIt(MUST, Reqs{"X-5-01"}, "leaves snapshots and bootstrap unchanged when attributes change", Ext("snapshot"), Ext("bootstrap"), func(s *S) {
		st := s.Create("attrs-snapshot", CT(ctText))
		off := st.appendAll("a|", "b|")
		d := st.MustPublishSnapshot(off[1], ctOctets, []byte("snap"))
		b0 := st.MustBootstrap()
		st.MustPutAttrs(supportAttrs)
		Expect(st.MustLatestSnapshot()).To(Equal(off[1]))
		g := st.ReadSnapshot(off[1])
		Expect(g).To(HaveBody("snap"))
		Expect(g).To(HaveHeader(hSnapshotDigest, d))
		Expect(g).To(HaveHeader(hContentType, ctOctets))
		b1 := st.MustBootstrap()
		Expect(b1.Parts).To(Equal(b0.Parts))
		for _, h := range []string{hSnapshotOffset, hNextOffset, hUpToDate} {
			Expect(b1.Resp.Get(h)).To(Equal(b0.Resp.Get(h)), "bootstrap %s", h)
		}
	})
})
