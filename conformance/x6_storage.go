package conformance

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// x6Part is one part of a /bootstrap response (extension §3.2).
type x6Part struct {
	ContentType string
	Body        []byte
}

// x6BootstrapParts reads GET {s}/bootstrap (200 multipart/mixed) into its parts.
func (st *Stream) x6BootstrapParts() (*Response, []x6Part) {
	ginkgo.GinkgoHelper()
	r := st.s.Do("GET", st.Ext+"/bootstrap")
	Expect(r).To(HaveStatus(200))
	mt, params, err := mime.ParseMediaType(r.Get(hContentType))
	Expect(err).NotTo(HaveOccurred(), "bootstrap Content-Type %q", r.Get(hContentType))
	Expect(mt).To(Equal("multipart/mixed"))
	mr := multipart.NewReader(bytes.NewReader(r.Data), params["boundary"])
	var parts []x6Part
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		Expect(err).NotTo(HaveOccurred(), "bootstrap body %q", excerpt(r.Data, 300))
		body, err := io.ReadAll(p)
		Expect(err).NotTo(HaveOccurred())
		parts = append(parts, x6Part{ContentType: p.Header.Get(hContentType), Body: body})
	}
	return r, parts
}

// x6Snapshot publishes a snapshot at record rec (PUT {s}/snapshot?record=, §2.2, §6.10)
// and returns the offset GET {s}/snapshot redirects to (§2.3).
func (st *Stream) x6Snapshot(rec int, body string) string {
	ginkgo.GinkgoHelper()
	r := st.s.Do("PUT", st.Ext+"/snapshot?record="+strconv.Itoa(rec), CT(ctJSON), Text(body))
	Expect(r).To(HaveStatus(204), "publishing a snapshot at record %d", rec)
	return st.x6SnapshotOffset()
}

// x6SnapshotOffset follows GET {s}/snapshot (307) and returns the decoded offset of its
// Location.
func (st *Stream) x6SnapshotOffset() string {
	ginkgo.GinkgoHelper()
	r := st.s.Do("GET", st.Ext+"/snapshot")
	Expect(r).To(HaveStatus(307))
	loc, err := url.Parse(r.Get(hLocation))
	Expect(err).NotTo(HaveOccurred(), "Location %q", r.Get(hLocation))
	prefix := st.ExtPath + "/snapshot/"
	Expect(loc.EscapedPath()).To(HavePrefix(prefix))
	off, err := url.PathUnescape(strings.TrimPrefix(loc.EscapedPath(), prefix))
	Expect(err).NotTo(HaveOccurred())
	return off
}

// x6RecordOffsets returns O(r) for every record r in (from, n], walking
// record=<r-1>&max_records=1 reads: the boundary after record r-1 is O(r) (§6.7).
func (st *Stream) x6RecordOffsets(from, n int) x6Offsets {
	ginkgo.GinkgoHelper()
	out := x6Offsets{}
	for r := from; r < n; r++ {
		resp := st.recordRead("record", strconv.Itoa(r), "max_records", "1")
		Expect(resp).To(SatisfyAll(HaveStatus(200), HaveHeader(hRecordNext, strconv.Itoa(r+1))))
		out[r+1] = resp.Get(hNextOffset)
	}
	return out
}

// x6Offsets maps record ordinals r to O(r).
type x6Offsets map[int]string

// at is O(r), failing the spec if it was not collected.
func (o x6Offsets) at(r int) string {
	ginkgo.GinkgoHelper()
	v, ok := o[r]
	Expect(ok).To(BeTrue(), "O(%d) was not collected", r)
	return v
}

// x6BatchBody frames payloads for append-batch (extension §4.1).
func x6BatchBody(payloads ...string) []byte {
	var b bytes.Buffer
	for _, p := range payloads {
		_ = binary.Write(&b, binary.BigEndian, uint32(len(p)))
		b.WriteString(p)
	}
	return b.Bytes()
}

// d2Offset matches the dsd offset format (docs/DESIGN.md D2).
var d2Offset = regexp.MustCompile(`^([0-9]{16})_([0-9]{16})$`)

// Spec: extension §6.10-§6.11: retention, snapshots and bootstrap by record; append-batch.
var _ = Section("x6", "X6.10-6.11 Records in retention, snapshots, bootstrap and batches", Ext(recordsToken), func() {
	ConformanceIt(MUST, Reqs{"X-6.10-01", "X-6.10-02", "X-6.10-03", "X-6.1-04", "X-6.6-04", "X-6.13-01", "X-2.2-11"}, "retains by record: F advances to a record boundary, trimmed ordinals answer 410 with the bounds, survivors keep their ordinals", Ext("snapshot"), func(s *S) {
		vals := recVals("r", 0, 7)
		st := s.createJSON("rec-retention", vals[:3]...)
		st.mustAppendRecords(3, vals[3:6]...)
		o := st.x6RecordOffsets(2, 6)
		snapAt := st.x6Snapshot(4, `{"folded":4}`)
		Expect(snapAt).To(Equal(o.at(4)), "snapshot?record=4 resolves to O(4)")
		ret := s.Do("PUT", st.Ext+"/retention?record=4")
		Expect(ret).To(HaveStatus(204))
		Expect(st.Head()).To(HaveRecordBounds(4, 6))
		for _, gone := range []string{"0", "3"} {
			r := st.recordRead("record", gone)
			Expect(r).To(HaveStatus(410), "record=%s after retention at record 4", gone)
			Expect(r).To(HaveRecordBounds(4, 6), "record=%s", gone)
		}
		Expect(st.Read(o.at(4))).To(HaveStatus(200))
		Expect(st.Read(o.at(3))).To(HaveStatus(410), "O(3) lies before the retained start")
		kept := st.recordRead("record", "4")
		Expect(kept).To(SatisfyAll(HaveStatus(200), HaveRecordBounds(4, 6), HaveHeader(hRecordStart, "4")))
		Expect(ndjsonValues(kept.Data)).To(Equal(vals[4:6]))
		Expect(st.recordRead("tail_records", "100")).To(HaveHeader(hRecordStart, "4"), "tail_records starts at max(F, N-count)")
		Expect(st.Read(offsetStart)).To(HaveStatus(410), "-1 lies before the retained start")
		Expect(arrayValues(st.Read(o.at(4)).Data)).To(Equal(vals[4:6]), "N - F = 2 retained messages")
		st.mustAppendRecords(6, vals[6])
		Expect(ndjsonValues(st.recordRead("record", "4").Data)).To(Equal(vals[4:7]))
		Expect(st.Head()).To(HaveRecordBounds(4, 7))
	})

	ConformanceIt(MUST, Reqs{"B-10-03", "X-6.6-01", "X-6.10-01"}, "gives a tail_records read a new ETag once retention changes its answer (no stale 304)", Ext("snapshot"), func(s *S) {
		vals := recVals("r", 0, 4)
		st := s.createJSON("rec-tail-etag", vals...)
		before := st.recordRead("tail_records", "3")
		Expect(before).To(SatisfyAll(HaveStatus(200), HaveHeader(hRecordStart, "1")))
		etag := before.Get(hETag)
		Expect(etag).NotTo(BeEmpty(), "a record read is a GET and carries an ETag")
		st.x6Snapshot(2, `{"folded":2}`)
		Expect(s.Do("PUT", st.Ext+"/retention?record=2")).To(HaveStatus(204))
		after := st.Get(Q("tail_records", "3"), H("If-None-Match", etag))
		Expect(after).To(HaveStatus(200), "the old ETag names other content: no 304")
		Expect(after).To(HaveHeader(hRecordStart, "2"))
		Expect(after.Get(hETag)).NotTo(Equal(etag))
		Expect(ndjsonValues(after.Data)).To(Equal(vals[2:]))
	})

	ConformanceIt(MUST, Reqs{"X-6.10-03", "X-6.10-01", "X-2.2-11"}, "accepts snapshots and retention at every record boundary, inside an append unit too, by offset or by record", Ext("snapshot"), func(s *S) {
		vals := recVals("r", 0, 4)
		st := s.createJSON("rec-boundaries", vals...)
		o := st.x6RecordOffsets(0, 4)
		Expect(st.x6Snapshot(1, `{"at":1}`)).To(Equal(o.at(1)))
		r := s.Do("PUT", st.Ext+"/snapshot/"+url.PathEscape(o.at(2)), CT(ctJSON), Text(`{"at":2}`))
		Expect(r).To(HaveStatus(204), "a snapshot at O(2), a message boundary inside the first append")
		Expect(st.x6SnapshotOffset()).To(Equal(o.at(2)))
		Expect(s.Do("PUT", st.Ext+"/retention/"+url.PathEscape(o.at(1)))).To(HaveStatus(204))
		Expect(st.Head()).To(HaveRecordBounds(1, 4))
		Expect(s.Do("PUT", st.Ext+"/retention?record=2")).To(HaveStatus(204))
		Expect(st.Head()).To(HaveRecordBounds(2, 4))
		Expect(arrayValues(st.Read(o.at(2)).Data)).To(Equal(vals[2:]))
	})

	ConformanceIt(MUST, Reqs{"X-6.10-04"}, "rejects a snapshot or retention offset inside a record with 400 (D2 offsets)", Ext("snapshot"), Profile("dsd"), func(s *S) {
		st := s.createJSON("rec-intra", recVals("r", 0, 3)...)
		o := st.x6RecordOffsets(0, 3)
		m := d2Offset.FindStringSubmatch(o.at(1))
		Expect(m).NotTo(BeNil(), "O(1) = %q is not a D2 offset", o.at(1))
		pos, _ := strconv.ParseUint(m[2], 10, 64)
		inside := fmt.Sprintf("%s_%016d", m[1], pos+1)
		Expect(inside < o.at(2)).To(BeTrue(), "%s lies inside record 1 (before O(2) = %s)", inside, o.at(2))
		Expect(s.Do("PUT", st.Ext+"/snapshot/"+url.PathEscape(inside), CT(ctJSON), Text(`{}`))).To(HaveStatus(400))
		Expect(s.Do("GET", st.Ext+"/snapshot")).To(HaveStatus(404), "no snapshot was published")
		Expect(st.x6Snapshot(2, `{}`)).To(Equal(o.at(2)))
		Expect(s.Do("PUT", st.Ext+"/retention/"+url.PathEscape(inside))).To(HaveStatus(400))
		Expect(st.Head()).To(HaveRecordBounds(0, 3))
	})

	ConformanceIt(SHOULD, Reqs{"X-6.10-05"}, "includes Stream-Record-First and Stream-Record-Next in snapshot read responses", Ext("snapshot"), func(s *S) {
		st := s.createJSON("rec-snap-headers", recVals("r", 0, 5)...)
		at := st.x6Snapshot(3, `{"at":3}`)
		read := s.Do("GET", st.Ext+"/snapshot/"+url.PathEscape(at))
		Expect(read).To(HaveStatus(200))
		Expect(read).To(HaveRecordBounds(0, 5))
		Expect(s.Do("PUT", st.Ext+"/retention?record=2")).To(HaveStatus(204))
		Expect(s.Do("GET", st.Ext+"/snapshot/"+url.PathEscape(at))).To(HaveRecordBounds(2, 5))
	})

	ConformanceIt(SHOULD, Reqs{"X-6.10-05"}, "includes Stream-Record-First and Stream-Record-Next in bootstrap responses", Ext("bootstrap"), func(s *S) {
		st := s.createJSON("rec-boot-headers", recVals("r", 0, 4)...)
		r, _ := st.x6BootstrapParts()
		Expect(r).To(HaveRecordBounds(0, 4))
	})

	ConformanceIt(MUST, Reqs{"X-6.10-06", "X-3.2-04"}, "bootstraps a JSON stream with one message per update part", Ext("bootstrap"), func(s *S) {
		vals := recVals("r", 0, 5)
		st := s.createJSON("rec-boot", vals[:3]...)
		st.mustAppendRecords(3, vals[3:]...)
		_, parts := st.x6BootstrapParts()
		Expect(parts).To(HaveLen(1+len(vals)), "an empty snapshot part, then one part per message")
		Expect(parts[0].Body).To(BeEmpty())
		for i, p := range parts[1:] {
			Expect(mediaType(p.ContentType)).To(Equal(ctJSON), "part %d", i+1)
			Expect(compactJSON(p.Body)).To(Equal(vals[i]), "part %d", i+1)
		}
	})

	ConformanceIt(MUST, Reqs{"X-6.10-06", "X-6.10-03"}, "bootstraps after a snapshot inside an append unit with one message per update part", Ext("bootstrap"), Ext("snapshot"), func(s *S) {
		vals := recVals("r", 0, 5)
		st := s.createJSON("rec-boot-snap", vals[:3]...)
		st.mustAppendRecords(3, vals[3:]...)
		st.x6Snapshot(2, `{"folded":2}`)
		_, parts := st.x6BootstrapParts()
		Expect(parts).To(HaveLen(1+3), "the snapshot, then records 2, 3 and 4")
		Expect(string(parts[0].Body)).To(Equal(`{"folded":2}`))
		for i, p := range parts[1:] {
			Expect(compactJSON(p.Body)).To(Equal(vals[2+i]), "update part %d", i+1)
		}
	})

	ConformanceIt(MUST, Reqs{"X-6.11-01", "X-6.11-02", "X-6.3-01"}, "acknowledges each append-batch frame with its own record range; failed frames assign none", Ext("append-batch"), func(s *S) {
		st := s.createJSON("rec-batch", recVal("pre", 0))
		body := x6BatchBody(jsonBatch(recVals("b", 0, 2)...), recVal("b", 2), `{"broken":`, `[]`, jsonBatch(recVals("b", 3, 6)...))
		r := s.Do("POST", st.Ext+"/append-batch", CT(ctJSON), Body(body))
		Expect(r).To(HaveStatus(200))
		var acks []map[string]json.RawMessage
		Expect(json.Unmarshal(r.Data, &acks)).To(Succeed(), "acks %q", r.Text())
		Expect(acks).To(HaveLen(5))
		want := []struct {
			ok          bool
			start, next string
		}{{true, "1", "3"}, {true, "3", "4"}, {false, "", ""}, {false, "", ""}, {true, "4", "7"}}
		for i, w := range want {
			status := string(acks[i]["status"])
			if !w.ok {
				Expect(status).To(MatchRegexp(`^4[0-9][0-9]$`), "frame %d (invalid JSON or []) fails: %s", i, r.Text())
				continue
			}
			Expect(status).To(MatchRegexp(`^2[0-9][0-9]$`), "frame %d: %s", i, r.Text())
			Expect(string(acks[i]["stream_record_start"])).To(Equal(w.start), "frame %d: %s", i, r.Text())
			Expect(string(acks[i]["stream_record_next"])).To(Equal(w.next), "frame %d: %s", i, r.Text())
		}
		Expect(st.Head()).To(HaveRecordBounds(0, 7))
		Expect(ndjsonValues(st.recordRead("record", "1").Data)).To(Equal(recVals("b", 0, 6)))
	})
})
