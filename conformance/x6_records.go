package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gcustom"
	"github.com/onsi/gomega/types"
)

// JSON record coordinates vocabulary (extension §6), restated from the spec.
const (
	recordsToken     = "json-record-coordinates-v1"
	hRecordStart     = "Stream-Record-Start"
	hRecordNext      = "Stream-Record-Next"
	hRecordFirst     = "Stream-Record-First"
	hRecordMatch     = "Stream-Record-Match"
	hDataContentType = "Stream-Data-Content-Type"
	ctNDJSON         = "application/x-ndjson"
	ctEnvelopes      = "application/vnd.durable-stream-records+ndjson"
	ctEnvelope       = "application/vnd.durable-stream-record+json"
)

// AdvertiseRecords matches a *Response whose Stream-Extensions lists the record
// coordinates token (extension §6, capability advertisement).
func AdvertiseRecords() types.GomegaMatcher {
	return gcustom.MakeMatcher(func(r *Response) (bool, error) {
		return hasToken(r.Header.Values(hExtensions), recordsToken), nil
	}).WithTemplate("Expected {{.Actual.Request.Method}} {{.Actual.Request.URL}} ({{.Actual.StatusCode}}) to advertise {{.Data}} in Stream-Extensions, got {{.Actual.Header.Values \"Stream-Extensions\"}}", recordsToken)
}

// HaveRecordRange matches a create or append acknowledgement with Stream-Record-Start
// and Stream-Record-Next equal to start and next (extension §6.3).
func HaveRecordRange(start, next uint64) types.GomegaMatcher {
	return SatisfyAll(
		HaveHeader(hRecordStart, strconv.FormatUint(start, 10)),
		HaveHeader(hRecordNext, strconv.FormatUint(next, 10)))
}

// HaveRecordBounds matches a response with Stream-Record-First and Stream-Record-Next
// equal to first and next (HEAD, §6.5; reads, §6.7).
func HaveRecordBounds(first, next uint64) types.GomegaMatcher {
	return SatisfyAll(
		HaveHeader(hRecordFirst, strconv.FormatUint(first, 10)),
		HaveHeader(hRecordNext, strconv.FormatUint(next, 10)))
}

// recordHeader reads header name as an unsigned decimal ordinal, failing the spec when it
// is missing or malformed.
func recordHeader(r *Response, name string) uint64 {
	ginkgo.GinkgoHelper()
	v := r.Get(name)
	Expect(v).To(MatchRegexp(`^(0|[1-9][0-9]*)$`), "%s: %q is not an unsigned decimal ordinal (%s)", name, v, r)
	n, err := strconv.ParseUint(v, 10, 64)
	Expect(err).NotTo(HaveOccurred())
	return n
}

// recVal is the kit's test value number i with tag: {"t":"<tag>","i":<i>}.
func recVal(tag string, i int) string { return fmt.Sprintf(`{"t":%q,"i":%d}`, tag, i) }

// recVals returns recVal(tag, from) .. recVal(tag, to-1).
func recVals(tag string, from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, recVal(tag, i))
	}
	return out
}

// jsonBatch is a JSON array body of vals (one record per element).
func jsonBatch(vals ...string) string { return "[" + strings.Join(vals, ",") + "]" }

// compactJSON is the compact form of one JSON value, failing the spec on invalid JSON.
func compactJSON(v []byte) string {
	ginkgo.GinkgoHelper()
	var b bytes.Buffer
	Expect(json.Compact(&b, v)).To(Succeed(), "%q is not a JSON value", excerpt(v, 200))
	return b.String()
}

// compactAll compacts each value.
func compactAll(vals []string) []string {
	ginkgo.GinkgoHelper()
	out := []string{}
	for _, v := range vals {
		out = append(out, compactJSON([]byte(v)))
	}
	return out
}

// ndjsonValues splits an NDJSON body into its values (compacted), failing the spec on an
// empty or invalid line. A final newline is optional; an empty body has no values.
func ndjsonValues(body []byte) []string {
	ginkgo.GinkgoHelper()
	out := []string{}
	if len(body) == 0 {
		return out
	}
	lines := strings.Split(string(body), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		Expect(strings.TrimSpace(l)).NotTo(BeEmpty(), "NDJSON line %d of %q is empty", i, excerpt(body, 300))
		out = append(out, compactJSON([]byte(l)))
	}
	return out
}

// arrayValues decodes an ordinary JSON-mode read body (a JSON array) into its compacted
// messages.
func arrayValues(body []byte) []string {
	ginkgo.GinkgoHelper()
	out := []string{}
	for _, m := range MustJSONArray(body) {
		out = append(out, compactJSON(m))
	}
	return out
}

// envelope is one line of the envelope view (extension §6.8).
type envelope struct {
	Record uint64
	Value  string // compacted
	Keys   []string
}

// parseEnvelope decodes one envelope object, failing the spec unless it is a JSON object
// with an unsigned integer record and a value.
func parseEnvelope(line string) envelope {
	ginkgo.GinkgoHelper()
	var fields map[string]json.RawMessage
	Expect(json.Unmarshal([]byte(line), &fields)).To(Succeed(), "envelope %q is not a JSON object", line)
	raw, ok := fields["record"]
	Expect(ok).To(BeTrue(), "envelope %q has no record", line)
	Expect(string(raw)).To(MatchRegexp(`^(0|[1-9][0-9]*)$`), "envelope %q: record is not an unsigned integer", line)
	val, ok := fields["value"]
	Expect(ok).To(BeTrue(), "envelope %q has no value", line)
	e := envelope{Value: compactJSON(val)}
	e.Record, _ = strconv.ParseUint(string(raw), 10, 64)
	for k := range fields {
		e.Keys = append(e.Keys, k)
	}
	sort.Strings(e.Keys)
	return e
}

// envelopes decodes an envelope-view body (one object per line).
func envelopes(body []byte) []envelope {
	ginkgo.GinkgoHelper()
	var out []envelope
	for _, l := range ndjsonValues(body) {
		out = append(out, parseEnvelope(l))
	}
	return out
}

// createJSON creates a JSON stream whose initial records are vals (none: an empty
// stream) and returns it.
func (s *S) createJSON(slug string, vals ...string) *Stream {
	ginkgo.GinkgoHelper()
	opts := []Opt{CT(ctJSON)}
	if len(vals) > 0 {
		opts = append(opts, Text(jsonBatch(vals...)))
	}
	return s.Create(slug, opts...)
}

// mustAppendRecords appends vals as one JSON array and checks the acknowledged range
// starts at start; it returns the response.
func (st *Stream) mustAppendRecords(start uint64, vals ...string) *Response {
	ginkgo.GinkgoHelper()
	r := st.Append(jsonBatch(vals...))
	Expect(r).To(HaveStatus(204))
	Expect(r).To(HaveRecordRange(start, start+uint64(len(vals))))
	return r
}

// recordRead sends a catch-up GET with record parameters given as key, value pairs.
func (st *Stream) recordRead(kv ...string) *Response {
	ginkgo.GinkgoHelper()
	Expect(len(kv) % 2).To(Equal(0))
	var opts []Opt
	for i := 0; i < len(kv); i += 2 {
		opts = append(opts, Q(kv[i], kv[i+1]))
	}
	return st.Get(opts...)
}

// Spec: extension §6 (opening, capability token), §6.1-§6.5: the record model, create and
// append acknowledgements, conditional appends, HEAD.
var _ = Section("x6", "X6 JSON record coordinates", Ext(recordsToken), func() {
	ConformanceIt(MUST, Reqs{"X-0-01", "X-0-02", "X-6-01", "X-6-02"}, "advertises json-record-coordinates-v1 on HEAD and every stream operation of a JSON stream", func(s *S) {
		st := s.Stream("rec-token")
		created := st.Put(CT(ctJSON), Text(jsonBatch(recVal("a", 0))))
		Expect(created).To(HaveStatus(201))
		st.ContentType = ctJSON
		again := st.Put(CT(ctJSON))
		Expect(again).To(HaveStatus(200))
		appended := st.Append(recVal("a", 1))
		Expect(appended).To(HaveStatus(204))
		head := st.Head()
		Expect(head).To(HaveStatus(200))
		read := st.Read(offsetStart)
		Expect(read).To(HaveStatus(200))
		recRead := st.recordRead("record", "0")
		Expect(recRead).To(HaveStatus(200))
		lp := st.LongPoll(offsetStart)
		Expect(lp).To(HaveStatus(200))
		sse := st.SSE(offsetStart)
		Expect(sse.Resp).To(HaveStatus(200))
		sse.Close()
		closed := st.Close()
		Expect(closed).To(HaveStatus(204))
		for _, r := range []*Response{created, again, appended, head, read, recRead, lp, sse.Resp, closed} {
			Expect(r).To(AdvertiseRecords())
		}
	})

	ConformanceIt(MUST, Reqs{"X-0-02", "X-6-02"}, "advertises the token on every response that targets a JSON stream: sub-resources, the 307 of /snapshot, refusals and DELETE (D5)", Ext("snapshot"), Ext("bootstrap"), Ext("append-batch"), Ext("attrs"), Profile("dsd"), func(s *S) {
		st := s.createJSON("rec-token-sub", recVal("a", 0), recVal("a", 1))
		o := st.x6RecordOffsets(0, 2)
		rs := []*Response{st.PublishSnapshot(o.at(1), []byte(`{"folded":1}`), CT(ctJSON))}
		rs = append(rs, st.LatestSnapshot(), st.ReadSnapshot(o.at(1)), st.DeleteSnapshot(o.at(1)), st.Bootstrap(),
			s.Do("GET", st.Ext+"/attrs"), s.Do("PUT", st.Ext+"/attrs", CT(ctJSON), Text(`{"title":"t"}`)),
			st.AppendBatch(batchBody([]byte(recVal("a", 2))), CT(ctJSON)), st.Retain(o.at(1)),
			st.Read(offsetStart), st.Read("9999999999999999_9999999999999999"))
		for i, want := range []int{204, 307, 200, 409, 200, 200, 204, 200, 204, 410, 400} {
			Expect(rs[i]).To(SatisfyAll(HaveStatus(want), AdvertiseRecords()))
		}
		Expect(s.Do("DELETE", st.URL)).To(SatisfyAll(HaveStatus(204), AdvertiseRecords()))
	})

	ConformanceIt(MUST, Reqs{"X-0-01", "X-6-01", "X-6-03"}, "never advertises the token on streams of other content types", func(s *S) {
		for _, ct := range []string{ctText, ctOctets, ctNDJSON, "application/ld+json", "text/json"} {
			st := s.Stream("rec-no-token")
			created := st.Put(CT(ct), Text(`{"a":1}`))
			Expect(created).To(HaveStatus(201))
			st.ContentType = ct
			appended := st.Append(`{"b":2}`)
			Expect(appended).To(HaveStatus(204))
			head := st.Head()
			read := st.Read(offsetStart)
			lp := st.LongPoll(offsetStart)
			sse := st.SSE(offsetStart)
			sse.Close()
			closed := st.Close()
			for _, r := range []*Response{created, appended, head, read, lp, sse.Resp, closed} {
				Expect(r).NotTo(AdvertiseRecords(), "content type %s", ct)
			}
		}
	})

	ConformanceIt(MUST, Reqs{"X-6.1-02", "X-6.3-02", "X-6.5-01", "X-6.1-07"}, "starts an empty JSON stream at F = N = 0, with PUT and with PUT []", func(s *S) {
		for _, body := range []string{"", "[]"} {
			st := s.Stream("rec-empty")
			opts := []Opt{CT(ctJSON)}
			if body != "" {
				opts = append(opts, Text(body))
			}
			r := st.Put(opts...)
			Expect(r).To(HaveStatus(201))
			Expect(r).To(HaveRecordRange(0, 0), "PUT body %q", body)
			h := st.Head()
			Expect(h).To(HaveStatus(200))
			Expect(h).To(AdvertiseRecords())
			Expect(h).To(HaveRecordBounds(0, 0), "PUT body %q", body)
		}
	})

	ConformanceIt(MUST, Reqs{"X-6.3-01", "X-6.1-01", "X-6.1-07", "X-6.5-01", "X-6.13-01"}, "assigns consecutive zero-based ordinals per flattened message, one contiguous range per create or append", func(s *S) {
		st := s.Stream("rec-ranges")
		created := st.Put(CT(ctJSON), Text(jsonBatch(recVals("a", 0, 2)...)))
		Expect(created).To(HaveStatus(201))
		Expect(created).To(HaveRecordRange(0, 2))
		st.ContentType = ctJSON
		one := st.Append(recVal("a", 2))
		Expect(one).To(HaveStatus(204))
		Expect(one).To(HaveRecordRange(2, 3), "a non-array value is one record")
		st.mustAppendRecords(3, recVals("a", 3, 6)...)
		nested := st.Append(`[[1,2],[3]]`)
		Expect(nested).To(HaveStatus(204))
		Expect(nested).To(HaveRecordRange(6, 8), "only one level of a top-level array is flattened")
		Expect(st.Head()).To(HaveRecordBounds(0, 8))
		want := append(recVals("a", 0, 6), `[1,2]`, `[3]`)
		Expect(arrayValues(st.Read(offsetStart).Data)).To(Equal(want))
		Expect(ndjsonValues(st.recordRead("record", "0").Data)).To(Equal(want))
	})

	ConformanceIt(MUST, Reqs{"X-6.3-02"}, "answers operations that create no records with Start = Next = the record tail", func(s *S) {
		st := s.createJSON("rec-none", recVals("a", 0, 3)...)
		Expect(st.Put(CT(ctJSON))).To(SatisfyAll(HaveStatus(200), HaveRecordRange(3, 3)), "an idempotent re-PUT")
		Expect(st.Close()).To(SatisfyAll(HaveStatus(204), HaveRecordRange(3, 3)), "a close-only POST")
		Expect(st.Close()).To(SatisfyAll(HaveStatus(204), HaveRecordRange(3, 3)), "a close-only POST on a closed stream")
		Expect(st.Put(CT(ctJSON), H(hClosed, "true"))).To(SatisfyAll(HaveStatus(200), HaveRecordRange(3, 3)), "a re-PUT of the closed stream")
	})

	ConformanceIt(MUST, Reqs{"X-6.3-03", "X-6.1-03", "X-6.13-01"}, "makes no ordinal visible for a failed append, and the next append continues at the tail", func(s *S) {
		st := s.createJSON("rec-atomic", recVal("a", 0))
		Expect(st.Append(jsonBatch(recVal("a", 1)), H(hSeq, "5"))).To(HaveStatus(204))
		failures := []struct {
			what string
			r    *Response
			code int
		}{
			{"invalid JSON", st.Append(`[{"t":"x","i":1},`), 400},
			{"an empty array", st.Append(`[]`), 400},
			{"a Stream-Seq regression", st.Append(jsonBatch(recVals("x", 0, 3)...), H(hSeq, "4")), 409},
			{"a content-type mismatch", st.Append(jsonBatch(recVals("x", 0, 3)...), CT(ctText)), 409},
			{"a record-tail mismatch", st.Append(jsonBatch(recVals("x", 0, 3)...), H(hRecordMatch, "0")), 412},
		}
		for _, f := range failures {
			Expect(f.r).To(HaveStatus(f.code), f.what)
			Expect(st.Head()).To(HaveRecordBounds(0, 2), "after %s", f.what)
		}
		st.mustAppendRecords(2, recVals("a", 2, 4)...)
		Expect(ndjsonValues(st.recordRead("record", "0").Data)).To(Equal(recVals("a", 0, 4)))
	})

	ConformanceIt(MUST, Reqs{"X-6.3-04", "X-6.1-01", "X-6.13-01"}, "gives concurrent appenders disjoint contiguous ranges in commit order", func(s *S) {
		st := s.createJSON("rec-concurrent")
		const writers, perWriter, batch = 6, 4, 3
		type ack struct {
			writer, n   int
			start, next uint64
			offset      string
			err         string
		}
		acks := make([]ack, 0, writers*perWriter)
		var mu sync.Mutex
		var wg sync.WaitGroup
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := 0; n < perWriter; n++ {
					tag := fmt.Sprintf("w%d-%d", w, n)
					a := ack{writer: w, n: n}
					r, err := s.TryDo(s.Ctx, "POST", st.URL, CT(ctJSON), Text(jsonBatch(recVals(tag, 0, batch)...)))
					switch {
					case err != nil:
						a.err = err.Error()
					case r.StatusCode != 204:
						a.err = r.String()
					default:
						s1, e1 := strconv.ParseUint(r.Get(hRecordStart), 10, 64)
						s2, e2 := strconv.ParseUint(r.Get(hRecordNext), 10, 64)
						if e1 != nil || e2 != nil {
							a.err = fmt.Sprintf("bad record range %q..%q", r.Get(hRecordStart), r.Get(hRecordNext))
						}
						a.start, a.next, a.offset = s1, s2, r.Get(hNextOffset)
					}
					mu.Lock()
					acks = append(acks, a)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		for _, a := range acks {
			Expect(a.err).To(BeEmpty(), "writer %d append %d", a.writer, a.n)
			Expect(a.next-a.start).To(Equal(uint64(batch)), "writer %d append %d: range [%d,%d)", a.writer, a.n, a.start, a.next)
		}
		sort.Slice(acks, func(i, j int) bool { return acks[i].start < acks[j].start })
		lastN := map[int]int{}
		for i, a := range acks {
			Expect(a.start).To(Equal(uint64(i*batch)), "ranges must tile [0,%d) without gaps or overlaps: %+v", writers*perWriter*batch, acks)
			if i > 0 {
				Expect(a.offset).To(SortAfter(acks[i-1].offset), "a range that commits later ends at a later offset")
			}
			if prev, ok := lastN[a.writer]; ok {
				Expect(a.n).To(BeNumerically(">", prev), "writer %d's sequential appends commit in its order", a.writer)
			}
			lastN[a.writer] = a.n
		}
		got := ndjsonValues(st.recordRead("record", "0").Data)
		Expect(got).To(HaveLen(writers * perWriter * batch))
		for _, a := range acks {
			Expect(got[a.start:a.next]).To(Equal(recVals(fmt.Sprintf("w%d-%d", a.writer, a.n), 0, batch)),
				"records [%d,%d) hold the body of the append acknowledged with that range", a.start, a.next)
		}
		Expect(st.Head()).To(HaveRecordBounds(0, uint64(writers*perWriter*batch)))
	})

	ConformanceIt(MUST, Reqs{"X-6.3-05", "X-6.13-01"}, "returns the original record range to a deduplicated producer retry", func(s *S) {
		st := s.createJSON("rec-dedup", recVal("pre", 0))
		first := st.Append(jsonBatch(recVals("p", 0, 2)...), producer("rec-p", 0, 0))
		Expect(first).To(SatisfyAll(HaveStatus(200), HaveRecordRange(1, 3)))
		second := st.Append(recVal("p", 2), producer("rec-p", 0, 1))
		Expect(second).To(SatisfyAll(HaveStatus(200), HaveRecordRange(3, 4)))
		Expect(st.Append(recVal("other", 0))).To(HaveRecordRange(4, 5))
		retry := st.Append(recVal("p", 2), producer("rec-p", 0, 1))
		Expect(retry).To(HaveStatus(204))
		Expect(retry).To(HaveRecordRange(3, 4), "the retry of seq 1")
		retry0 := st.Append(jsonBatch(recVals("p", 0, 2)...), producer("rec-p", 0, 0))
		Expect(retry0).To(HaveStatus(204))
		Expect(retry0).To(HaveRecordRange(1, 3), "the retry of seq 0")
		Expect(st.Head()).To(HaveRecordBounds(0, 5))
	})

	ConformanceIt(MUST, Reqs{"X-6.3-05"}, "returns the original record range to a retry of an old producer sequence number", func(s *S) {
		st := s.createJSON("rec-dedup-old")
		const n = 12
		for seq := 0; seq < n; seq++ {
			r := st.Append(recVal("p", seq), producer("rec-p", 0, seq))
			Expect(r).To(SatisfyAll(HaveStatus(200), HaveRecordRange(uint64(seq), uint64(seq+1))))
		}
		for _, seq := range []int{0, 1, n / 2} {
			retry := st.Append(recVal("p", seq), producer("rec-p", 0, seq))
			Expect(retry).To(HaveStatus(204))
			Expect(retry).To(HaveRecordRange(uint64(seq), uint64(seq+1)), "the retry of seq %d after seq %d", seq, n-1)
		}
		Expect(st.Head()).To(HaveRecordBounds(0, n))
	})

	ConformanceIt(MUST, Reqs{"X-6.1-05"}, "numbers records independently of offsets, Stream-Seq, producer seqs and fields in the values", func(s *S) {
		st := s.createJSON("rec-independent")
		Expect(st.Append(`{"record":7,"seq":9}`, H(hSeq, "100"))).To(HaveRecordRange(0, 1))
		Expect(st.Append(jsonBatch(recVals("p", 0, 3)...), producer("rec-p", 3, 0))).To(HaveRecordRange(1, 4))
		Expect(st.Append(jsonBatch(recVals("p", 3, 5)...), producer("rec-p", 3, 1))).To(HaveRecordRange(4, 6))
		Expect(st.Append(`{"record":0}`, H(hSeq, "200"))).To(HaveRecordRange(6, 7))
	})

	ConformanceIt(MUST, Reqs{"X-6.4-01", "X-6.4-02", "X-6.4-03"}, "appends only when Stream-Record-Match equals the record tail, else 412 with Stream-Record-Next and Stream-Next-Offset", func(s *S) {
		st := s.createJSON("rec-match")
		Expect(st.Append(recVal("a", 0), H(hRecordMatch, "0"))).To(SatisfyAll(HaveStatus(204), HaveRecordRange(0, 1)))
		ok := st.Append(jsonBatch(recVals("a", 1, 3)...), H(hRecordMatch, "1"))
		Expect(ok).To(SatisfyAll(HaveStatus(204), HaveRecordRange(1, 3)))
		tail := ok.Get(hNextOffset)
		for _, stale := range []string{"0", "1", "2", "4", "1000"} {
			r := st.Append(recVal("x", 0), H(hRecordMatch, stale))
			Expect(r).To(HaveStatus(412), "Stream-Record-Match: %s with N = 3", stale)
			Expect(r).To(HaveHeader(hRecordNext, "3"))
			Expect(r).To(HaveHeader(hNextOffset, tail))
		}
		Expect(st.Head()).To(SatisfyAll(HaveRecordBounds(0, 3), HaveHeader(hNextOffset, tail)))
		Expect(arrayValues(st.Read(offsetStart).Data)).To(Equal(recVals("a", 0, 3)))
	})

	ConformanceIt(MUST, Reqs{"X-6.4-04"}, "checks Stream-Record-Match together with Stream-Seq and producer headers", func(s *S) {
		st := s.createJSON("rec-match-compose", recVal("a", 0))
		Expect(st.Append(recVal("a", 1), H(hSeq, "5"), H(hRecordMatch, "1"))).To(SatisfyAll(HaveStatus(204), HaveRecordRange(1, 2)))
		Expect(st.Append(recVal("x", 0), H(hSeq, "4"), H(hRecordMatch, "2"))).To(HaveStatus(409), "a matching record tail does not excuse a Stream-Seq regression")
		Expect(st.Append(recVal("x", 1), H(hSeq, "6"), H(hRecordMatch, "1"))).To(HaveStatus(412), "a valid Stream-Seq does not excuse a record-tail mismatch")
		Expect(st.Append(recVal("a", 2), H(hSeq, "6"), H(hRecordMatch, "2"))).To(SatisfyAll(HaveStatus(204), HaveRecordRange(2, 3)),
			"the Stream-Seq of a rejected append was not recorded")
		Expect(st.Append(recVal("x", 2), producer("rec-p", 0, 0), H(hRecordMatch, "2"))).To(HaveStatus(412))
		p := st.Append(recVal("a", 3), producer("rec-p", 0, 0), H(hRecordMatch, "3"))
		Expect(p).To(SatisfyAll(HaveStatus(200), HaveRecordRange(3, 4)), "a producer append rejected with 412 did not consume its sequence number")
		Expect(p).To(HaveHeader(hProducerSeq, "0"))
		Expect(arrayValues(st.Read(offsetStart).Data)).To(Equal(recVals("a", 0, 4)))
	})

	ConformanceIt(MUST, Reqs{"X-6.2-01", "X-6.2-03", "X-6.8-04"}, "keeps commit order, ordinals and bytes for out-of-order client event times, and adds no server timestamp", func(s *S) {
		times := []string{"2026-07-18T10:30:00.300Z", "2026-07-18T10:29:59.900Z", "2026-07-18T10:30:00.100Z", "2020-01-01T00:00:00Z"}
		var vals []string
		for i, t := range times {
			vals = append(vals, fmt.Sprintf(`{"captured_at":%q,"i":%d}`, t, i))
		}
		st := s.createJSON("rec-event-time")
		st.mustAppendRecords(0, vals[:2]...)
		st.mustAppendRecords(2, vals[2:]...)
		Expect(ndjsonValues(st.recordRead("record", "0").Data)).To(Equal(compactAll(vals)))
		env := envelopes(st.recordRead("record", "0", "record_view", "envelope").Data)
		Expect(env).To(HaveLen(len(vals)))
		for i, e := range env {
			Expect(e.Record).To(Equal(uint64(i)))
			Expect(e.Value).To(Equal(compactJSON([]byte(vals[i]))))
			Expect(e.Keys).To(Equal([]string{"record", "value"}), "an envelope carries the ordinal and the client's value, no server timestamp")
		}
	})

	ConformanceIt(MUST, Reqs{"X-6.1-07", "X-6.3-01"}, "ignores Stream-Record-Match on non-JSON streams and answers record parameters there with 400", Profile("dsd"), func(s *S) {
		st := s.Create("rec-text", CT(ctText), Text("abc"))
		r := st.Append("def", H(hRecordMatch, "7"))
		Expect(r).To(HaveStatus(204))
		Expect(r).To(HaveNoHeader(hRecordStart))
		for _, kv := range [][]string{{"record", "0"}, {"record", "now"}, {"tail_records", "1"}, {"record", "0", "record_view", "envelope"}} {
			Expect(st.recordRead(kv...)).To(HaveStatus(400), "%v on a text stream", kv)
		}
		Expect(st.Read(offsetStart)).To(HaveBody("abcdef"))
	})

	ConformanceIt(MUST, Reqs{"X-6.13-01", "X-6.7-01"}, "serves the canonical bytes: each message as compact JSON and a newline (D3)", Profile("dsd"), func(s *S) {
		st := s.createJSON("rec-canonical")
		Expect(st.Append("[ {\"b\" : 2 , \"a\": [1, 2.50, 1e3]},\n \"s\" , null ]")).To(HaveStatus(204))
		r := st.recordRead("record", "0")
		Expect(r).To(HaveBody("{\"b\":2,\"a\":[1,2.50,1e3]}\n\"s\"\nnull\n"))
		Expect(st.Read(offsetStart)).To(HaveBody(`[{"b":2,"a":[1,2.50,1e3]},"s",null]`))
	})
})
