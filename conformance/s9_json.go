package conformance

import (
	"encoding/json"

	. "github.com/onsi/gomega"
)

// messages decodes a JSON array body into generic values.
func messages(r *Response) []any {
	var v []any
	Expect(json.Unmarshal(r.Data, &v)).To(Succeed(), "body %q is not a JSON array", excerpt(r.Data, 200))
	return v
}

// Spec: base protocol §9 and §9.1 (digest §15), content types and JSON mode.
var _ = Section("9", "9 JSON mode", func() {
	ConformanceIt(MUST, Reqs{"B-9.1-03", "B-5.1-11", "B-9.1-05"}, "creates an empty JSON stream from PUT [] and reads it as []", func(s *S) {
		st := s.Stream("json-empty")
		Expect(st.Put(CT(ctJSON), Text("[]"))).To(HaveStatus(201))
		r := st.Read(offsetStart)
		Expect(r).To(HaveStatus(200))
		Expect(r).To(HaveBody("[]"))
		Expect(r).To(BeTrueHeader(hUpToDate))
	})

	ConformanceIt(MUST, Reqs{"B-9.1-03"}, "rejects POST [] with 400", func(s *S) {
		st := s.Create("json-post-empty", CT(ctJSON))
		Expect(st.Append("[]")).To(HaveStatus(400))
		Expect(st.Read(offsetStart)).To(HaveBody("[]"))
	})

	ConformanceIt(MUST, Reqs{"B-9.1-03"}, "rejects invalid JSON with 400 and stores nothing", func(s *S) {
		st := s.Create("json-invalid", CT(ctJSON))
		for _, bad := range []string{`{"a":`, `not json`, `[1,2,]`, `{"a":1} {"b":2}`} {
			Expect(st.Append(bad)).To(HaveStatus(400), "body %q", bad)
		}
		Expect(st.Read(offsetStart)).To(HaveBody("[]"))
	})

	ConformanceIt(MUST, Reqs{"B-5.1-11", "B-9.1-03"}, "rejects an invalid JSON PUT body with 400", func(s *S) {
		st := s.Stream("json-put-invalid")
		Expect(st.Put(CT(ctJSON), Text(`{"a":`))).To(HaveStatus(400))
		Expect(st.Head()).To(HaveStatus(404))
	})

	ConformanceIt(MUST, Reqs{"B-9.1-02", "B-9.1-04"}, "stores a non-array value as one message and reads it wrapped in an array", func(s *S) {
		st := s.Create("json-single", CT(ctJSON))
		st.MustAppend(`{"event":1}`)
		r := st.Read(offsetStart)
		Expect(r).To(HaveHeader(hContentType, ctJSON))
		Expect(messages(r)).To(Equal([]any{map[string]any{"event": float64(1)}}))
	})

	ConformanceIt(MUST, Reqs{"B-9.1-02"}, "flattens exactly one level of a top-level array", func(s *S) {
		cases := []struct {
			body string
			want []any
		}{
			{`[{"a":1},{"b":2}]`, []any{map[string]any{"a": float64(1)}, map[string]any{"b": float64(2)}}},
			{`[[1,2],[3,4]]`, []any{[]any{float64(1), float64(2)}, []any{float64(3), float64(4)}}},
			{`[[[1,2,3]]]`, []any{[]any{[]any{float64(1), float64(2), float64(3)}}}},
			{`[1,2,3]`, []any{float64(1), float64(2), float64(3)}},
		}
		for _, c := range cases {
			st := s.Create("json-flatten", CT(ctJSON))
			st.MustAppend(c.body)
			Expect(messages(st.Read(offsetStart))).To(Equal(c.want), "body %s", c.body)
		}
	})

	ConformanceIt(MUST, Reqs{"B-9.1-01", "B-9.1-04"}, "keeps message boundaries: appends read back as one array, and each append offset starts a message", func(s *S) {
		st := s.Create("json-concat", CT(ctJSON))
		o1 := st.MustAppend(`{"n":1}`)
		o2 := st.MustAppend(`[{"n":2},{"n":3}]`)
		st.MustAppend(`{"n":4}`)
		all := st.Read(offsetStart)
		Expect(messages(all)).To(Equal([]any{
			map[string]any{"n": float64(1)}, map[string]any{"n": float64(2)},
			map[string]any{"n": float64(3)}, map[string]any{"n": float64(4)},
		}))
		Expect(messages(st.Read(o1))).To(HaveLen(3))
		Expect(messages(st.Read(o2))).To(Equal([]any{map[string]any{"n": float64(4)}}))
	})

	ConformanceIt(MUST, Reqs{"B-9.1-05"}, "round-trips every JSON value type in order with nesting preserved", func(s *S) {
		st := s.Create("json-types", CT(ctJSON))
		values := []string{`"string value"`, `42`, `true`, `null`, `{"nested":{"deep":[1,{"x":"y"}]}}`, `-1.5e3`, `"ünïcödé ☃"`}
		for _, v := range values {
			st.MustAppend(v)
		}
		var want []any
		for _, v := range values {
			var x any
			Expect(json.Unmarshal([]byte(v), &x)).To(Succeed())
			want = append(want, x)
		}
		Expect(messages(st.Read(offsetStart))).To(Equal(want))
	})

	ConformanceIt(MUST, Reqs{"B-9.1-01"}, "treats application/json with a charset parameter as JSON mode", func(s *S) {
		st := s.Create("json-charset", CT("application/json; charset=utf-8"))
		st.MustAppend(`[{"a":1},{"b":2}]`)
		Expect(st.Append("[]")).To(HaveStatus(400), "JSON mode rejects []")
		Expect(messages(st.Read(offsetStart))).To(HaveLen(2))
	})

	ConformanceIt(MUST, Reqs{"B-9.1-01", "B-5.1-11"}, "flattens a JSON PUT body into initial messages", func(s *S) {
		st := s.Create("json-put-body", CT(ctJSON), Text(`[{"a":1},{"b":2}]`))
		st.MustAppend(`{"c":3}`)
		Expect(messages(st.Read(offsetStart))).To(HaveLen(3))
	})

	ConformanceIt(MUST, Reqs{"B-9.1-04", "B-5.6-03"}, "answers a JSON read at the tail with []", func(s *S) {
		st := s.Create("json-tail", CT(ctJSON))
		tail := st.MustAppend(`{"a":1}`)
		r := st.Read(tail)
		Expect(r).To(HaveStatus(200))
		Expect(r).To(HaveBody("[]"))
		Expect(r).To(HaveHeader(hContentType, ctJSON))
	})
})
