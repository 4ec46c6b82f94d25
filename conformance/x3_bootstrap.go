package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// bootPart is one MIME part of a bootstrap response.
type bootPart struct {
	ContentType string
	Body        []byte
}

// bootResult is a parsed bootstrap response (extension §3.2).
type bootResult struct {
	Resp     *Response
	Boundary string
	Parts    []bootPart
}

// updates returns the bodies of the update parts (every part after the first).
func (b bootResult) updates() []string {
	var out []string
	for _, p := range b.Parts[1:] {
		out = append(out, string(p.Body))
	}
	return out
}

// Bootstrap sends GET {stream}/bootstrap.
func (st *Stream) Bootstrap(opts ...Opt) *Response {
	ginkgo.GinkgoHelper()
	return st.s.Do("GET", st.Ext+"/bootstrap", opts...)
}

// MustBootstrap expects GET {stream}/bootstrap to answer 200 and parses the body.
func (st *Stream) MustBootstrap() bootResult {
	ginkgo.GinkgoHelper()
	r := st.Bootstrap()
	Expect(r).To(HaveStatus(200))
	return parseBootstrap(r)
}

// boundedBootstrap sends GET {stream}/bootstrap with opts, giving up after the SSE budget
// (a server that treated the request as a live read would never end it).
func (st *Stream) boundedBootstrap(opts ...Opt) (*Response, error) {
	ctx, cancel := context.WithTimeout(st.s.Ctx, st.s.sseBudget())
	defer cancel()
	return st.s.TryDo(ctx, "GET", st.Ext+"/bootstrap", opts...)
}

// parseBootstrap parses a bootstrap body as an RFC 2046 multipart/mixed entity: the
// Content-Type names multipart/mixed with a boundary, every part ends at a delimiter, the
// close delimiter ends the body, and the boundary occurs nowhere but in the delimiters.
func parseBootstrap(r *Response) bootResult {
	ginkgo.GinkgoHelper()
	ct := r.Get(hContentType)
	mt, params, err := mime.ParseMediaType(ct)
	Expect(err).NotTo(HaveOccurred(), "bootstrap Content-Type %q", ct)
	Expect(mt).To(Equal("multipart/mixed"), "bootstrap Content-Type %q", ct)
	boundary := params["boundary"]
	Expect(boundary).NotTo(BeEmpty(), "bootstrap Content-Type %q has no boundary", ct)
	res := bootResult{Resp: r, Boundary: boundary}
	mr := multipart.NewReader(bytes.NewReader(r.Data), boundary)
	for {
		p, err := mr.NextRawPart()
		if err == io.EOF {
			break
		}
		Expect(err).NotTo(HaveOccurred(), "multipart body after %d parts (no close delimiter?): %q", len(res.Parts), excerpt(r.Data, 300))
		body, err := io.ReadAll(p)
		Expect(err).NotTo(HaveOccurred(), "part %d does not end at a delimiter", len(res.Parts))
		res.Parts = append(res.Parts, bootPart{ContentType: p.Header.Get(hContentType), Body: body})
	}
	Expect(res.Parts).NotTo(BeEmpty(), "a bootstrap has at least the snapshot part")
	Expect(bytes.Count(r.Data, []byte("--"+boundary))).To(Equal(len(res.Parts)+1),
		"the boundary %q must occur only in the %d delimiters (RFC 2046 §5.1.1)", boundary, len(res.Parts)+1)
	return res
}

// Spec: extension §3 (bootstrap), and §2.1 / §3.4 where snapshots and ordinary reads meet.
var _ = Section("x3", "X3 Bootstrap", func() {
	ConformanceIt(MUST, Reqs{"X-3.2-01", "X-3.2-02", "X-3.2-05", "X-3.2-06", "X-3.2-09"}, "bootstraps a stream without snapshot: an empty application/octet-stream part, then every message", Ext("bootstrap"), func(s *S) {
		st := s.Create("boot-nosnap", CT(ctText))
		msgs := []string{"first\n", "second", "third and last"}
		off := st.appendAll(msgs...)
		streamCT := st.Head().Get(hContentType)

		b := st.MustBootstrap()
		Expect(b.Resp).To(HaveHeader(hSnapshotOffset, "-1"))
		Expect(b.Resp).To(HaveHeader(hNextOffset, off[3]), "the tail after all returned data")
		Expect(b.Resp).To(BeTrueHeader(hUpToDate))
		Expect(b.Parts[0].Body).To(BeEmpty(), "the first part is empty without a snapshot")
		Expect(b.Parts[0].ContentType).To(Equal(ctOctets), "the empty first part's Content-Type")
		Expect(b.updates()).To(Equal(msgs), "one part per message, from the start")
		for i, p := range b.Parts[1:] {
			Expect(p.ContentType).To(Equal(streamCT), "part %d carries its update's content type", i+1)
		}
	})

	ConformanceIt(MUST, Reqs{"X-3.2-01", "X-3.2-03", "X-3.2-04", "X-3.2-06"}, "bootstraps from the snapshot: its bytes and stored Content-Type first, then one part per later message", Ext("bootstrap"), Ext("snapshot"), func(s *S) {
		st := s.Create("boot-snap", CT(ctText))
		off := st.appendAll("a|", "b|", "c|", "d|")
		blob := binaryBlob(2000, 9)
		const snapCT = "application/vnd.kit.state; v=1"
		st.MustPublishSnapshot(off[2], snapCT, blob)

		b := st.MustBootstrap()
		Expect(b.Resp).To(HaveHeader(hSnapshotOffset, off[2]))
		Expect(b.Resp).To(HaveHeader(hNextOffset, off[4]))
		Expect(b.Resp).To(BeTrueHeader(hUpToDate))
		Expect(b.Parts[0].Body).To(Equal(blob), "the raw snapshot bytes")
		Expect(b.Parts[0].ContentType).To(Equal(snapCT), "the snapshot's stored Content-Type")
		Expect(b.updates()).To(Equal([]string{"c|", "d|"}), "the messages after the snapshot offset")
		for i, p := range b.Parts[1:] {
			Expect(p.ContentType).To(Equal(st.Head().Get(hContentType)), "part %d", i+1)
		}
	})

	ConformanceIt(MUST, Reqs{"X-3.2-08", "X-3.2-04", "X-3.2-02"}, "returns binary messages byte for byte, hostile ones included, with a boundary found in none of them", Ext("bootstrap"), func(s *S) {
		st := s.Create("boot-hostile", CT(ctOctets))
		Expect(st.AppendBytes([]byte("seed"))).To(HaveStatus(204))
		prev := st.MustBootstrap().Boundary
		msgs := [][]byte{
			[]byte("seed"),
			binaryBlob(256, 0),
			[]byte("\r\n--"),
			[]byte("--"),
			[]byte("\r\n\r\n"),
			[]byte("\r\n--fake\r\nContent-Type: text/html\r\n\r\n<b>not a part</b>\r\n--fake--\r\n"),
			[]byte("Content-Type: application/json\r\n\r\n{}"),
			[]byte("--" + prev + "\r\nContent-Type: text/plain\r\n\r\nforged\r\n--" + prev + "--\r\n"),
			[]byte("\r\n--" + prev),
			{0},
			[]byte("\r"),
			[]byte("\n"),
			[]byte("=?utf-8?q?encoded?="),
		}
		for _, m := range msgs[1:] {
			Expect(st.AppendBytes(m)).To(HaveStatus(204))
		}
		b := st.MustBootstrap()
		Expect(b.Parts).To(HaveLen(len(msgs)+1), "one part per message after the empty snapshot part")
		for i, m := range msgs {
			Expect(b.Parts[i+1].Body).To(Equal(m), "message %d", i)
			Expect(b.Parts[i+1].ContentType).To(Equal(ctOctets), "message %d", i)
		}
	})

	ConformanceIt(MUST, Reqs{"X-3.2-07", "X-3.2-02"}, "sends the multipart entity itself, with no outer framing", Ext("bootstrap"), func(s *S) {
		st := s.Create("boot-framing", CT(ctOctets))
		Expect(st.AppendBytes(binaryBlob(40, 200))).To(HaveStatus(204))
		b := st.MustBootstrap()
		body := b.Resp.Data
		Expect(bytes.HasPrefix(bytes.TrimLeft(body, "\r\n"), []byte("--"+b.Boundary))).To(BeTrue(),
			"the body must open with the first delimiter, not a framing container: %q", excerpt(body, 80))
		end := []byte("--" + b.Boundary + "--")
		i := bytes.LastIndex(body, end)
		Expect(i).To(BeNumerically(">=", 0), "no close delimiter")
		Expect(strings.Trim(string(body[i+len(end):]), "\r\n")).To(BeEmpty(), "nothing may follow the close delimiter but a line break")
	})

	ConformanceIt(MUST, Reqs{"X-3.2-04", "X-3.2-02"}, "bootstraps a JSON stream with one part per flattened message", Ext("bootstrap"), func(s *S) {
		st := s.Create("boot-json", CT(ctJSON))
		st.MustAppend(`{"a":1}`)
		st.MustAppend(`[{"b":2},{"c":[3,"x"]}]`)
		st.MustAppend(`"text with\nnewline"`)
		st.MustAppend(`[[1,2]]`)
		b := st.MustBootstrap()
		want := []string{`{"a":1}`, `{"b":2}`, `{"c":[3,"x"]}`, `"text with\nnewline"`, `[1,2]`}
		Expect(b.Parts).To(HaveLen(len(want) + 1))
		var got []json.RawMessage
		for i, p := range b.Parts[1:] {
			Expect(json.Valid(p.Body)).To(BeTrue(), "part %d %q is one JSON value", i+1, p.Body)
			got = append(got, json.RawMessage(p.Body))
			Expect(p.ContentType).To(Equal(st.Head().Get(hContentType)), "part %d", i+1)
		}
		Expect(compactMessages(got)).To(Equal(want))
	})

	ConformanceIt(MUST, Reqs{"X-3.2-09"}, "answers /bootstrap of a missing stream with 404", Ext("bootstrap"), func(s *S) {
		Expect(s.Stream("boot-missing").Bootstrap()).To(HaveStatus(404))
	})

	ConformanceIt(SHOULD, Reqs{"X-3.1-02"}, "rejects live query parameters on /bootstrap with 400", Ext("bootstrap"), func(s *S) {
		st := s.Create("boot-live-400", CT(ctText), Text("x"))
		for _, live := range []string{"sse", "long-poll", "true"} {
			r, err := st.boundedBootstrap(Q("live", live))
			Expect(err).NotTo(HaveOccurred(), "live=%s: the response did not end", live)
			Expect(r).To(HaveStatus(400), "live=%s", live)
		}
	})

	ConformanceIt(MUST, Reqs{"X-3.3-01"}, "never serves /bootstrap as a live read: no event stream, no waiting at the tail", Ext("bootstrap"), func(s *S) {
		st := s.Create("boot-oneshot", CT(ctText), Text("x"))
		s.tryTimed(func() string {
			for _, live := range []string{"long-poll", "sse"} {
				r, err := st.boundedBootstrap(Q("live", live))
				Expect(err).NotTo(HaveOccurred(), "live=%s: the response did not end within %s", live, st.s.sseBudget())
				Expect(r).NotTo(HaveMediaType(ctEventStream), "live=%s", live)
				if miss := s.slowMiss(r, "GET /bootstrap?live="+live); miss != "" {
					return miss
				}
			}
			return ""
		})
	})

	ConformanceIt(MUST, Reqs{"X-3.4-01"}, "never returns snapshot bytes from ordinary reads", Ext("snapshot"), func(s *S) {
		st := s.Create("boot-no-leak", CT(ctText))
		off := st.appendAll("a|", "b|")
		st.MustPublishSnapshot(off[2], ctText, []byte("SNAPSHOT-BYTES|"))
		st.MustAppend("c|")
		all, _ := st.CatchUp(offsetStart)
		Expect(string(all)).To(Equal("a|b|c|"), "catch-up from -1")
		rest, _ := st.CatchUp(off[2])
		Expect(string(rest)).To(Equal("c|"), "catch-up from the snapshot offset")
		Expect(st.LongPoll(offsetStart)).To(HaveBody("a|b|c|"), "long-poll from -1")
		evs, c := st.sseCatchUp(offsetStart)
		c.Close()
		Expect(strings.Join(DataEvents(evs), "")).To(Equal("a|b|c|"), "SSE from -1")
	})

	ConformanceIt(MUST, Reqs{"X-3.4-03", "X-3.2-03", "X-3.2-06"}, "covers the earliest retained offset with the snapshot once reads answer 410", Ext("bootstrap"), Ext("snapshot"), func(s *S) {
		st := s.Create("boot-covers", CT(ctText))
		off := st.appendAll("a|", "b|", "c|", "d|")
		st.MustPublishSnapshot(off[3], ctText, []byte("a|b|c|"))
		st.MustRetain(off[1])
		Expect(st.Read(off[0])).To(HaveStatus(410))
		b := st.MustBootstrap()
		Expect(b.Resp).To(HaveHeader(hSnapshotOffset, off[3]), "the snapshot at or after the retained offset")
		Expect(string(b.Parts[0].Body)).To(Equal("a|b|c|"))
		Expect(b.updates()).To(Equal([]string{"d|"}), "updates start after the snapshot point")
		Expect(b.Resp).To(HaveHeader(hNextOffset, off[4]))
	})

	ConformanceIt(MUST, Reqs{"X-2.1-02", "X-3.2-04", "X-3.2-08"}, "uses one message boundary model for appends, snapshot offsets, bootstrap parts and reads", Ext("bootstrap"), Ext("snapshot"), func(s *S) {
		st := s.Create("boot-boundaries", CT(ctOctets))
		msgs := []string{"\x00one", "two\r\n--", strings.Repeat("3", 500)}
		off := st.appendAll(msgs...)
		for i, o := range off {
			snap := fmt.Sprintf("S%d", i)
			st.MustPublishSnapshot(o, ctOctets, []byte(snap))
			b := st.MustBootstrap()
			Expect(b.Resp).To(HaveHeader(hSnapshotOffset, o))
			Expect(string(b.Parts[0].Body)).To(Equal(snap))
			want := append([]string{}, msgs[i:]...)
			if len(want) == 0 {
				want = nil
			}
			Expect(b.updates()).To(Equal(want), "after a snapshot at offset %d", i)
			read, _ := st.CatchUp(o)
			Expect(string(read)).To(Equal(strings.Join(msgs[i:], "")), "an ordinary read from the snapshot offset returns the same messages")
		}
	})

	ConformanceIt(MUST, Reqs{"X-3.4-03", "X-3.2-06", "X-3.2-01", "X-2.2-10"}, "rebuilds every message exactly once after a 410: /bootstrap, then SSE from its Stream-Next-Offset, while appends continue", Ext("bootstrap"), Ext("snapshot"), func(s *S) {
		st := s.Create("boot-resume", CT(ctText))
		msg := func(i int) string { return fmt.Sprintf("m%03d|", i) }
		const before, during = 6, 40
		var all []string
		for i := 0; i < before+during; i++ {
			all = append(all, msg(i))
		}
		want := strings.Join(all, "")
		off := st.appendAll(all[:before]...)
		// The application's fold of messages is their concatenation.
		st.MustPublishSnapshot(off[4], ctText, []byte(strings.Join(all[:4], "")))
		st.MustRetain(off[4])

		appender := s.Async(func() *Response {
			var last *Response
			for i := before; i < before+during; i++ {
				last = st.Append(msg(i))
				Expect(last).To(HaveStatus(200, 204), "appending %s", msg(i))
				time.Sleep(2 * time.Millisecond)
			}
			return last
		})

		// A client that last read at off[1] learns that its position is gone.
		Expect(st.Read(off[1])).To(HaveStatus(410))
		b := st.MustBootstrap()
		Expect(b.Resp).To(HaveHeader(hSnapshotOffset, off[4]))
		state := string(b.Parts[0].Body) + strings.Join(b.updates(), "")
		Expect(strings.HasPrefix(want, state)).To(BeTrue(), "snapshot and updates %q must be a prefix of the stream", state)
		next := b.Resp.Get(hNextOffset)
		Expect(next).NotTo(BeEmpty())

		c := st.SSE(next)
		Expect(c.Resp).To(HaveStatus(200))
		got := func(evs []Event) string { return state + strings.Join(DataEvents(evs), "") }
		lastMsg := all[len(all)-1]
		evs := c.Collect(s, s.sseBudget()+2*time.Second, func(evs []Event) bool {
			g := got(evs)
			return len(g) >= len(want) || strings.HasSuffix(g, lastMsg)
		})
		c.Close()
		s.Await(appender)
		Expect(got(evs)).To(Equal(want), "no message lost or repeated")
	})

	ConformanceIt(MUST, Reqs{"X-3.2-01", "X-2.1-02"}, "sets Stream-Next-Offset right after the last message it returns, also while appends continue", Ext("bootstrap"), func(s *S) {
		st := s.Create("boot-next-offset", CT(ctText))
		st.MustAppend("start|")
		const n = 60
		appender := s.Async(func() *Response {
			var last *Response
			for i := 0; i < n; i++ {
				last = st.Append(fmt.Sprintf("m%03d|", i))
				Expect(last).To(HaveStatus(200, 204))
			}
			return last
		})
		var boots []bootResult
		for i := 0; i < 15; i++ {
			boots = append(boots, st.MustBootstrap())
		}
		s.Await(appender)
		all, _ := st.CatchUp(offsetStart)
		for i, b := range boots {
			rest, _ := st.CatchUp(b.Resp.Get(hNextOffset))
			Expect(strings.Join(b.updates(), "")+string(rest)).To(Equal(string(all)),
				"bootstrap #%d: its parts, then a read from its Stream-Next-Offset %q, must give the stream exactly once", i, b.Resp.Get(hNextOffset))
		}
	})

	ConformanceIt(MUST, Reqs{"X-3.2-01"}, "answers every bootstrap with Cache-Control: no-store and a fresh random boundary (D5)", Ext("bootstrap"), Profile("dsd"), func(s *S) {
		st := s.Create("boot-dsd", CT(ctText), Text("x"))
		a, b := st.MustBootstrap(), st.MustBootstrap()
		Expect(a.Resp).To(HaveHeader(hCacheControl, "no-store"))
		Expect(a.Boundary).NotTo(Equal(b.Boundary))
		Expect(len(a.Boundary)).To(BeNumerically(">=", 32), "a boundary with at least 128 random bits")
	})
})
