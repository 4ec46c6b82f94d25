package conformance

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// sseRecordMessages decodes the messages of a default-view record-aware SSE data event
// (extension §6.9): the base JSON-mode representation (a JSON array of the messages) or
// newline-delimited messages. The kit's values are objects, so an array is a batch.
func sseRecordMessages(data string) []string {
	ginkgo.GinkgoHelper()
	var arr []json.RawMessage
	if json.Unmarshal([]byte(data), &arr) == nil && arr != nil {
		out := []string{}
		for _, m := range arr {
			out = append(out, compactJSON(m))
		}
		return out
	}
	return ndjsonValues([]byte(data))
}

// recControl is a record-aware SSE control event: the base fields and the record bounds.
type recControl struct {
	Control
	First, Next uint64
}

// parseRecControl decodes a control event of a record-aware SSE read, failing the spec
// unless streamFirstRecord and streamNextRecord are unsigned integers (extension §6.9).
func parseRecControl(ev Event) recControl {
	ginkgo.GinkgoHelper()
	c, err := ParseControl(ev)
	Expect(err).NotTo(HaveOccurred())
	rc := recControl{Control: c}
	for name, dst := range map[string]*uint64{"streamFirstRecord": &rc.First, "streamNextRecord": &rc.Next} {
		raw, ok := c.Fields[name]
		Expect(ok).To(BeTrue(), "record-aware control event %s has no %s", ev.Data, name)
		Expect(string(raw)).To(MatchRegexp(`^(0|[1-9][0-9]*)$`), "control event %s: %s is not an unsigned integer", ev.Data, name)
		*dst, _ = strconv.ParseUint(string(raw), 10, 64)
	}
	return rc
}

// recordSSE walks the events of a default-view record-aware SSE read starting at record
// start: every control event carries the record bounds, and each one's streamNextRecord
// follows every message sent before it (§6.9). It returns the messages and the last
// control event.
func recordSSE(evs []Event, start, first uint64) ([]string, recControl) {
	ginkgo.GinkgoHelper()
	msgs := []string{}
	var last recControl
	seen := false
	for _, ev := range evs {
		switch ev.Type {
		case "data":
			msgs = append(msgs, sseRecordMessages(ev.Data)...)
		case "control":
			last = parseRecControl(ev)
			seen = true
			Expect(last.First).To(Equal(first), "streamFirstRecord in %s", ev.Data)
			Expect(last.Next).To(Equal(start+uint64(len(msgs))), "streamNextRecord in %s must follow the %d message(s) sent since record %d", ev.Data, len(msgs), start)
		}
	}
	Expect(seen).To(BeTrue(), "no control event in %v", evs)
	return msgs, last
}

// fiveRecords creates a JSON stream holding recVals("r", 0, 5) in two appends
// ([r0,r1,r2], [r3,r4]), so that records 1, 2 and 4 start inside an append unit.
func (s *S) fiveRecords(slug string) (*Stream, []string, string) {
	ginkgo.GinkgoHelper()
	vals := recVals("r", 0, 5)
	st := s.createJSON(slug, vals[:3]...)
	tail := st.mustAppendRecords(3, vals[3:]...).Get(hNextOffset)
	return st, vals, tail
}

// Spec: extension §6.6-§6.9: record-aware reads, record-aligned responses, the envelope
// view, long-poll and SSE.
var _ = Section("x6", "X6.6-6.9 Record-aware reads", Ext(recordsToken), func() {
	ConformanceIt(MUST, Reqs{"X-6.6-01", "X-6.7-01", "X-6.7-02", "X-6.7-03", "X-6-02", "B-5.6-05"}, "reads from record=<n> as record-aligned NDJSON with Stream-Record-First, -Start, -Next and Stream-Next-Offset", func(s *S) {
		st, vals, tail := s.fiveRecords("rec-read")
		for start := 0; start < len(vals); start++ {
			r := st.recordRead("record", strconv.Itoa(start))
			Expect(r).To(HaveStatus(200), "record=%d", start)
			Expect(r).To(HaveMediaType(ctNDJSON))
			Expect(r).To(AdvertiseRecords())
			Expect(r).To(HaveRecordBounds(0, 5))
			Expect(r).To(HaveHeader(hRecordStart, strconv.Itoa(start)))
			Expect(r).To(HaveHeader(hNextOffset, tail))
			Expect(r).To(BeTrueHeader(hUpToDate))
			Expect(ndjsonValues(r.Data)).To(Equal(vals[start:]), "record=%d", start)
		}
	})

	ConformanceIt(MUST, Reqs{"X-6.6-08", "X-6.7-01", "X-6.7-02", "X-6.7-03", "B-5.6-05"}, "returns at most max_records complete records, and its Stream-Next-Offset is the boundary of Stream-Record-Next", func(s *S) {
		st, vals, _ := s.fiveRecords("rec-max")
		for start := 0; start < len(vals); start++ {
			for _, max := range []int{1, 2} {
				end := min(start+max, len(vals))
				r := st.recordRead("record", strconv.Itoa(start), "max_records", strconv.Itoa(max))
				Expect(r).To(HaveStatus(200))
				Expect(ndjsonValues(r.Data)).To(Equal(vals[start:end]), "record=%d&max_records=%d", start, max)
				Expect(r).To(HaveRecordBounds(0, uint64(end)))
				Expect(r).To(HaveHeader(hRecordStart, strconv.Itoa(start)))
				if end < len(vals) {
					Expect(r).NotTo(BeTrueHeader(hUpToDate), "record=%d&max_records=%d leaves records out", start, max)
				}
				next := r.Get(hNextOffset)
				Expect(next).To(BeOffset())
				byOffset := st.Read(next)
				Expect(byOffset).To(HaveStatus(200), "an offset read at the Stream-Next-Offset of record=%d&max_records=%d", start, max)
				Expect(arrayValues(byOffset.Data)).To(Equal(vals[end:]), "Stream-Next-Offset %s must be the boundary of record %d", next, end)
			}
		}
	})

	ConformanceIt(MUST, Reqs{"X-6.13-01", "X-6.7-05", "X-6.12-01", "B-9.1-04"}, "exposes one canonical sequence to offset reads (still JSON arrays) and record reads, with O(r) at the first byte of record r", func(s *S) {
		st, vals, tail := s.fiveRecords("rec-same")
		whole := st.Read(offsetStart)
		Expect(whole).To(HaveStatus(200))
		Expect(whole).To(HaveMediaType(ctJSON))
		Expect(arrayValues(whole.Data)).To(Equal(vals))
		// Walk record by record; each Stream-Next-Offset is O(r) of the next record.
		offsets := []string{}
		rec := 0
		for rec < len(vals) {
			r := st.recordRead("record", strconv.Itoa(rec), "max_records", "1")
			Expect(r).To(HaveStatus(200))
			Expect(ndjsonValues(r.Data)).To(Equal(vals[rec : rec+1]))
			rec++
			Expect(r).To(HaveHeader(hRecordNext, strconv.Itoa(rec)))
			offsets = append(offsets, r.Get(hNextOffset))
		}
		Expect(offsets[len(offsets)-1]).To(Equal(tail))
		for i, o := range offsets {
			r := st.Read(o)
			Expect(r).To(HaveStatus(200))
			Expect(r).To(HaveMediaType(ctJSON), "an ordinary offset read of a JSON stream keeps the JSON-mode representation")
			Expect(arrayValues(r.Data)).To(Equal(vals[i+1:]), "offset read at O(%d) = %s", i+1, o)
			if i > 0 {
				Expect(o).To(SortAfter(offsets[i-1]))
			}
		}
	})

	ConformanceIt(MUST, Reqs{"X-6.6-05", "X-6.7-04", "X-6.7-01"}, "answers record=N with an empty up-to-date response whose Start and Next are N", func(s *S) {
		st, _, tail := s.fiveRecords("rec-at-tail")
		r := st.recordRead("record", "5")
		Expect(r).To(HaveStatus(200))
		Expect(r).To(HaveEmptyBody())
		Expect(r).To(BeTrueHeader(hUpToDate))
		Expect(r).To(HaveRecordBounds(0, 5))
		Expect(r).To(HaveHeader(hRecordStart, "5"))
		Expect(r).To(HaveHeader(hNextOffset, tail))
		Expect(r).To(HaveMediaType(ctNDJSON))
		empty := s.createJSON("rec-at-zero").recordRead("record", "0")
		Expect(empty).To(SatisfyAll(HaveStatus(200), HaveEmptyBody(), BeTrueHeader(hUpToDate), HaveRecordBounds(0, 0), HaveHeader(hRecordStart, "0")))
	})

	ConformanceIt(MUST, Reqs{"X-6.6-06"}, "answers record > N with 400 and Stream-Record-Next", func(s *S) {
		st, _, _ := s.fiveRecords("rec-beyond")
		for _, n := range []string{"6", "100", "18446744073709551615"} {
			r := st.recordRead("record", n)
			Expect(r).To(HaveStatus(400), "record=%s with N = 5", n)
			Expect(r).To(HaveHeader(hRecordNext, "5"), "record=%s", n)
		}
	})

	ConformanceIt(MUST, Reqs{"X-6.6-01", "X-6.6-07", "X-6.7-04"}, "starts record=now and tail_records=0 at the record tail, and tail_records=c at max(F, N-c)", func(s *S) {
		st, vals, tail := s.fiveRecords("rec-tail")
		for _, kv := range [][]string{{"record", "now"}, {"tail_records", "0"}} {
			r := st.recordRead(kv...)
			Expect(r).To(HaveStatus(200), "%v", kv)
			Expect(r).To(HaveEmptyBody(), "%v", kv)
			Expect(r).To(BeTrueHeader(hUpToDate), "%v", kv)
			Expect(r).To(HaveRecordBounds(0, 5), "%v", kv)
			Expect(r).To(HaveHeader(hRecordStart, "5"), "%v", kv)
			Expect(r).To(HaveHeader(hNextOffset, tail), "%v", kv)
		}
		for _, c := range []struct {
			count string
			start int
		}{{"1", 4}, {"2", 3}, {"5", 0}, {"6", 0}, {"100", 0}} {
			r := st.recordRead("tail_records", c.count)
			Expect(r).To(HaveStatus(200), "tail_records=%s", c.count)
			Expect(r).To(HaveHeader(hRecordStart, strconv.Itoa(c.start)), "tail_records=%s", c.count)
			Expect(r).To(HaveRecordBounds(0, 5))
			Expect(ndjsonValues(r.Data)).To(Equal(vals[c.start:]), "tail_records=%s", c.count)
		}
	})

	ConformanceIt(MUST, Reqs{"X-6.6-02"}, "rejects record, tail_records and offset in any combination with 400", func(s *S) {
		st, _, _ := s.fiveRecords("rec-exclusive")
		for _, q := range []string{
			"record=0&offset=-1", "record=now&offset=now", "tail_records=1&offset=-1",
			"record=0&tail_records=1", "record=now&tail_records=0", "offset=-1&record=1&live=long-poll",
		} {
			Expect(st.Get(RawQ(q))).To(HaveStatus(400), "?%s", q)
		}
	})

	ConformanceIt(MUST, Reqs{"X-6.6-03", "X-6.6-01", "B-5.6-02"}, "rejects malformed record and tail_records values with 400", func(s *S) {
		st, _, _ := s.fiveRecords("rec-malformed")
		for _, key := range []string{"record", "tail_records"} {
			for _, v := range []string{"-1", "abc", "1.5", "", "1e2"} {
				Expect(st.recordRead(key, v)).To(HaveStatus(400), "%s=%q", key, v)
			}
		}
	})

	ConformanceIt(MUST, Reqs{"X-6.6-09", "B-5.6-02"}, "rejects max_records without a record-aware start, and a max_records that is not a positive integer, with 400", func(s *S) {
		st, _, _ := s.fiveRecords("rec-max-bad")
		for _, q := range []string{"max_records=1", "offset=-1&max_records=1", "offset=-1&live=long-poll&max_records=1"} {
			Expect(st.Get(RawQ(q))).To(HaveStatus(400), "?%s", q)
		}
		for _, v := range []string{"0", "-1", "abc", ""} {
			Expect(st.recordRead("record", "0", "max_records", v)).To(HaveStatus(400), "max_records=%q", v)
		}
	})

	ConformanceIt(MUST, Reqs{"X-6.6-10", "X-6.6-11"}, "rejects max_bytes on record-aware reads with 400", func(s *S) {
		st, _, _ := s.fiveRecords("rec-max-bytes")
		for _, q := range []string{"record=0&max_bytes=100", "record=now&max_bytes=1", "tail_records=2&max_bytes=100", "record=0&max_records=1&max_bytes=100"} {
			Expect(st.Get(RawQ(q))).To(HaveStatus(400), "?%s", q)
		}
	})

	ConformanceIt(MUST, Reqs{"X-6.8-01", "X-6.8-03", "X-6.8-04", "X-6.7-02"}, "serves record_view=envelope as {record, value} lines with the same record headers", func(s *S) {
		st, vals, tail := s.fiveRecords("rec-envelope")
		for _, q := range [][]string{
			{"record", "1"}, {"record", "2", "max_records", "2"}, {"tail_records", "2"}, {"record", "now"},
		} {
			plain := st.recordRead(q...)
			env := st.recordRead(append(q, "record_view", "envelope")...)
			Expect(env).To(HaveStatus(200), "%v", q)
			Expect(env).To(HaveMediaType(ctEnvelopes), "%v", q)
			Expect(env).To(AdvertiseRecords())
			for _, h := range []string{hRecordFirst, hRecordStart, hRecordNext, hNextOffset, hUpToDate} {
				Expect(env.Get(h)).To(Equal(plain.Get(h)), "%v: %s of the envelope view and of the default view", q, h)
			}
			start := recordHeader(env, hRecordStart)
			lines := envelopes(env.Data)
			values := ndjsonValues(plain.Data)
			Expect(lines).To(HaveLen(len(values)), "%v", q)
			for i, e := range lines {
				Expect(e.Record).To(Equal(start+uint64(i)), "%v line %d", q, i)
				Expect(e.Value).To(Equal(vals[start+uint64(i)]), "%v line %d", q, i)
			}
		}
		Expect(st.Head()).To(HaveHeader(hNextOffset, tail))
	})

	ConformanceIt(MUST, Reqs{"X-6.8-05", "B-10-03"}, "changes nothing with the envelope view: bytes, offsets, ordinals, ETags and ordinary reads stay the same", func(s *S) {
		st, _, _ := s.fiveRecords("rec-envelope-noop")
		before := []*Response{st.Read(offsetStart), st.recordRead("record", "1"), st.Head()}
		for i := 0; i < 2; i++ {
			Expect(st.recordRead("record", "0", "record_view", "envelope")).To(HaveStatus(200))
			Expect(st.recordRead("tail_records", "3", "record_view", "envelope", "max_records", "1")).To(HaveStatus(200))
		}
		after := []*Response{st.Read(offsetStart), st.recordRead("record", "1"), st.Head()}
		for i := range before {
			Expect(after[i].Text()).To(Equal(before[i].Text()), "%s", after[i])
			for _, h := range []string{hETag, hNextOffset, hRecordFirst, hRecordStart, hRecordNext, hContentType} {
				Expect(after[i].Get(h)).To(Equal(before[i].Get(h)), "%s of %s", h, after[i])
			}
		}
		Expect(before[1].Get(hETag)).NotTo(BeEmpty(), "a record read is a GET and carries an ETag (B-10-03)")
	})

	ConformanceIt(MUST, Reqs{"X-6.8-02"}, "rejects record_view=envelope without a record-aware start with 400", func(s *S) {
		st, _, _ := s.fiveRecords("rec-envelope-bad")
		for _, q := range []string{"record_view=envelope", "offset=-1&record_view=envelope", "offset=-1&live=long-poll&record_view=envelope"} {
			Expect(st.Get(RawQ(q))).To(HaveStatus(400), "?%s", q)
		}
	})

	ConformanceIt(MUST, Reqs{"X-6.9-01", "X-6.7-01", "B-5.7-04"}, "answers a record-aware long-poll with data at once, record-aligned, with a cursor", func(s *S) {
		st, vals, tail := s.fiveRecords("rec-lp-data")
		s.tryTimed(func() string {
			r := st.LongPoll("", Q("record", "2"))
			Expect(r).To(HaveStatus(200))
			Expect(r).To(HaveMediaType(ctNDJSON))
			Expect(ndjsonValues(r.Data)).To(Equal(vals[2:]))
			Expect(r).To(SatisfyAll(HaveRecordBounds(0, 5), HaveHeader(hRecordStart, "2"), HaveHeader(hNextOffset, tail)))
			Expect(r).To(HaveHeader(hCursor, MatchRegexp(`^[0-9]+$`)))
			Expect(r).To(AdvertiseRecords())
			return s.slowMiss(r, "a record-aware long-poll with data available")
		})
	})

	ConformanceIt(MUST, Reqs{"X-6.9-01", "X-6.7-01", "X-6.7-02"}, "wakes a long-poll at record=N with the appended records", func(s *S) {
		st, _, _ := s.fiveRecords("rec-lp-wake")
		n := 5
		s.tryTimed(func() string {
			done := s.Async(func() *Response { return st.LongPoll("", Q("record", strconv.Itoa(n))) })
			time.Sleep(s.wakeDelay())
			woke := recVals(fmt.Sprintf("wake%d", n), 0, 2)
			ack := st.mustAppendRecords(uint64(n), woke...)
			r := s.Await(done)
			start := n
			n += 2
			if r.StatusCode == 204 {
				return fmt.Sprintf("the long-poll timed out (204 after %s) instead of waking", r.Elapsed.Round(time.Millisecond))
			}
			Expect(r).To(HaveStatus(200))
			Expect(ndjsonValues(r.Data)).To(Equal(woke))
			Expect(r).To(SatisfyAll(HaveHeader(hRecordStart, strconv.Itoa(start)), HaveRecordBounds(0, uint64(n)), HaveHeader(hNextOffset, ack.Get(hNextOffset))))
			return ""
		})
	})

	ConformanceIt(MUST, Reqs{"X-6.9-01", "X-6-02", "B-5.7-05"}, "times out a record=now long-poll with 204, the tail and the token", func(s *S) {
		st, _, tail := s.fiveRecords("rec-lp-timeout")
		r := st.LongPoll("", Q("record", "now"))
		Expect(r).To(HaveStatus(204))
		Expect(r).To(HaveHeader(hNextOffset, tail))
		Expect(r).To(BeTrueHeader(hUpToDate))
		Expect(r).To(AdvertiseRecords())
		Expect(r.Elapsed).To(BeNumerically(">=", s.immediate()), "the server must wait before a 204")
	})

	ConformanceIt(MUST, Reqs{"X-6.9-01", "X-6.9-02", "X-6.9-03", "X-6.9-04"}, "streams record-aware SSE with streamFirstRecord and streamNextRecord after every message, live appends included", func(s *S) {
		st, vals, tail := s.fiveRecords("rec-sse")
		c := st.SSE("", Q("record", "1"))
		Expect(c.Resp).To(HaveStatus(200))
		Expect(c.Resp).To(HaveMediaType(ctEventStream))
		Expect(c.Resp).To(AdvertiseRecords())
		evs := c.Collect(s, s.sseBudget(), UntilUpToDateControl)
		msgs, last := recordSSE(evs, 1, 0)
		Expect(msgs).To(Equal(vals[1:]))
		Expect(last.Next).To(Equal(uint64(5)))
		Expect(last.NextOffset).To(Equal(tail))
		live := recVals("live", 0, 2)
		newTail := st.mustAppendRecords(5, live...).Get(hNextOffset)
		more := c.Collect(s, s.sseBudget(), func(evs []Event) bool {
			l := evs[len(evs)-1]
			return l.Type == "control" && parseRecControl(l).Next >= 7
		})
		msgs, last = recordSSE(more, 5, 0)
		Expect(msgs).To(Equal(live))
		Expect(last.NextOffset).To(Equal(newTail))
	})

	ConformanceIt(MUST, Reqs{"X-6.9-01", "X-6.9-02", "X-6.6-07"}, "resumes SSE from streamNextRecord or streamNextOffset, and starts record=now and tail_records SSE at the right record", func(s *S) {
		st, vals, tail := s.fiveRecords("rec-sse-resume")
		now, _ := st.sseCatchUp("", Q("record", "now"))
		Expect(DataEvents(now)).To(BeEmpty(), "record=now sends no history")
		_, last := recordSSE(now, 5, 0)
		Expect(last.NextOffset).To(Equal(tail))
		tailEvs, _ := st.sseCatchUp("", Q("tail_records", "2"))
		msgs, _ := recordSSE(tailEvs, 3, 0)
		Expect(msgs).To(Equal(vals[3:]))
		extra := recVal("r", 5)
		st.mustAppendRecords(5, extra)
		byRecord, _ := st.sseCatchUp("", Q("record", strconv.FormatUint(last.Next, 10)))
		msgs, _ = recordSSE(byRecord, 5, 0)
		Expect(msgs).To(Equal([]string{extra}), "reconnecting with the last streamNextRecord")
		byOffset, _ := st.sseCatchUp(last.NextOffset)
		var got []string
		for _, d := range DataEvents(byOffset) {
			got = append(got, arrayValues([]byte(d))...)
		}
		Expect(got).To(Equal([]string{extra}), "reconnecting with the last streamNextOffset (base JSON-mode data)")
	})

	ConformanceIt(MUST, Reqs{"X-6.9-05", "X-6.8-04", "X-6.9-02"}, "sends one envelope per SSE data event with Stream-Data-Content-Type, live appends included", func(s *S) {
		st, vals, _ := s.fiveRecords("rec-sse-envelope")
		c := st.SSE("", Q("record", "1"), Q("record_view", "envelope"))
		Expect(c.Resp).To(HaveStatus(200))
		Expect(c.Resp).To(HaveHeader(hDataContentType, ctEnvelope))
		evs := c.Collect(s, s.sseBudget(), UntilUpToDateControl)
		live := recVals("live", 0, 3)
		st.mustAppendRecords(5, live...)
		evs = append(evs, c.Collect(s, s.sseBudget(), func(evs []Event) bool {
			l := evs[len(evs)-1]
			return l.Type == "control" && parseRecControl(l).Next >= 8
		})...)
		want := append(append([]string{}, vals[1:]...), live...)
		rec := uint64(1)
		for _, ev := range evs {
			switch ev.Type {
			case "data":
				Expect(ev.Data).NotTo(ContainSubstring("\n"), "an envelope data event holds exactly one object")
				e := parseEnvelope(ev.Data)
				Expect(e.Record).To(Equal(rec))
				Expect(e.Value).To(Equal(want[rec-1]))
				rec++
			case "control":
				rc := parseRecControl(ev)
				Expect(rc.Next).To(Equal(rec), "streamNextRecord follows every envelope sent before the control event")
			}
		}
		Expect(rec).To(Equal(uint64(8)))
	})

	ConformanceIt(MUST, Reqs{"X-6.9-05"}, "follows each envelope SSE data event with its own control event (CONFORMANCE.md)", Profile("dsd"), func(s *S) {
		st, _, _ := s.fiveRecords("rec-sse-envelope-pairs")
		evs, _ := st.sseCatchUp("", Q("record", "0"), Q("record_view", "envelope"))
		var types []string
		for _, ev := range evs {
			types = append(types, ev.Type)
		}
		Expect(strings.Join(types, " ")).To(Equal(strings.TrimSpace(strings.Repeat("data control ", 5))))
	})

	ConformanceIt(MUST, Reqs{"B-5.6-06", "B-5.8-06", "X-6.9-02", "X-6.7-01"}, "ends record-aware reads of a closed stream with Stream-Closed and a closing control event with the record bounds", func(s *S) {
		st, vals, _ := s.fiveRecords("rec-eof")
		final := st.MustClose().Get(hNextOffset)
		r := st.recordRead("record", "3")
		Expect(ndjsonValues(r.Data)).To(Equal(vals[3:]))
		Expect(r).To(BeTrueHeader(hClosed))
		Expect(r).To(HaveHeader(hNextOffset, final))
		c := st.SSE("", Q("record", "now"))
		Expect(c.Resp).To(HaveStatus(200))
		evs := c.CollectToEnd(s, s.sseBudget())
		Expect(evs).NotTo(BeEmpty())
		rc := parseRecControl(evs[len(evs)-1])
		Expect(rc.Closed).To(BeTrue())
		Expect(rc.Next).To(Equal(uint64(5)))
		Expect(rc.First).To(Equal(uint64(0)))
		Expect(rc.NextOffset).To(Equal(final))
	})
})
