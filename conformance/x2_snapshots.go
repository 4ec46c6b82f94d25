package conformance

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"mime"
	"net/url"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Extension header names (extension §2-§5), restated from the spec.
const (
	hSnapshotOffset = "Stream-Snapshot-Offset"
	hSnapshotDigest = "Stream-Snapshot-Digest"
	hSnapshotMatch  = "Stream-Snapshot-Match"
	hStreamAttrs    = "Stream-Attrs"
)

// snapshotURL is {stream}/snapshot/{offset}, the offset path-escaped (extension §8).
func (st *Stream) snapshotURL(offset string) string {
	return st.Ext + "/snapshot/" + url.PathEscape(offset)
}

// retentionURL is {stream}/retention/{offset}, the offset path-escaped (extension §8).
func (st *Stream) retentionURL(offset string) string {
	return st.Ext + "/retention/" + url.PathEscape(offset)
}

// PublishSnapshot sends PUT {stream}/snapshot/{offset} with body and opts as given (no
// Content-Type unless opts set one).
func (st *Stream) PublishSnapshot(offset string, body []byte, opts ...Opt) *Response {
	ginkgo.GinkgoHelper()
	return st.s.Do("PUT", st.snapshotURL(offset), append([]Opt{Body(body)}, opts...)...)
}

// MustPublishSnapshot publishes a snapshot with Content-Type ct, fails the spec unless
// the server answers 204 with a Stream-Snapshot-Digest, and returns the digest.
func (st *Stream) MustPublishSnapshot(offset, ct string, body []byte) string {
	ginkgo.GinkgoHelper()
	r := st.PublishSnapshot(offset, body, CT(ct))
	Expect(r).To(HaveStatus(204), "publishing a snapshot at %q", offset)
	Expect(r.Get(hSnapshotDigest)).NotTo(BeEmpty(), "publish answered without %s", hSnapshotDigest)
	return r.Get(hSnapshotDigest)
}

// Retain sends PUT {stream}/retention/{offset}.
func (st *Stream) Retain(offset string, opts ...Opt) *Response {
	ginkgo.GinkgoHelper()
	return st.s.Do("PUT", st.retentionURL(offset), opts...)
}

// MustRetain advances retention to offset and fails the spec unless the server answers 2xx.
func (st *Stream) MustRetain(offset string) {
	ginkgo.GinkgoHelper()
	Expect(st.Retain(offset)).To(HaveStatus(200, 204), "advancing retention to %q", offset)
}

// ReadSnapshot sends GET {stream}/snapshot/{offset}.
func (st *Stream) ReadSnapshot(offset string, opts ...Opt) *Response {
	ginkgo.GinkgoHelper()
	return st.s.Do("GET", st.snapshotURL(offset), opts...)
}

// DeleteSnapshot sends DELETE {stream}/snapshot/{offset}.
func (st *Stream) DeleteSnapshot(offset string) *Response {
	ginkgo.GinkgoHelper()
	return st.s.Do("DELETE", st.snapshotURL(offset))
}

// LatestSnapshot sends GET {stream}/snapshot.
func (st *Stream) LatestSnapshot() *Response {
	ginkgo.GinkgoHelper()
	return st.s.Do("GET", st.Ext+"/snapshot")
}

// MustLatestSnapshot expects GET {stream}/snapshot to answer 307 with a Location at
// {stream}/snapshot/{offset} (extension §2.3) and returns the decoded offset.
func (st *Stream) MustLatestSnapshot() string {
	ginkgo.GinkgoHelper()
	r := st.LatestSnapshot()
	Expect(r).To(HaveStatus(307))
	return st.snapshotLocation(r)
}

// snapshotLocation resolves a 307's Location against the request URL, checks that its
// path is {stream}/snapshot/{one segment}, and returns the segment, percent-decoded
// (extension §8).
func (st *Stream) snapshotLocation(r *Response) string {
	ginkgo.GinkgoHelper()
	loc := r.Get(hLocation)
	Expect(loc).NotTo(BeEmpty(), "307 without Location")
	ref, err := url.Parse(loc)
	Expect(err).NotTo(HaveOccurred(), "Location %q", loc)
	// Only the path is compared: behind a proxy, a server may name its own host.
	abs := r.Request.URL.ResolveReference(ref)
	prefix := st.ExtPath + "/snapshot/"
	Expect(abs.EscapedPath()).To(HavePrefix(prefix), "Location %q is not under %s", loc, prefix)
	seg := strings.TrimPrefix(abs.EscapedPath(), prefix)
	Expect(seg).NotTo(BeEmpty(), "Location %q names no offset", loc)
	Expect(seg).NotTo(ContainSubstring("/"), "Location %q has more than one segment after /snapshot/", loc)
	offset, err := url.PathUnescape(seg)
	Expect(err).NotTo(HaveOccurred(), "Location %q: offset segment is not percent-encoded properly", loc)
	return offset
}

// snapshotDigest is docs/DESIGN.md D5's digest: "sha256:" + hex SHA-256 over the 8-byte
// little-endian length of the normalized media type, the media type, and the body. The
// normalized media type is the lowercased type/subtype without parameters; a publish
// without Content-Type stores application/octet-stream.
func snapshotDigest(ct string, body []byte) string {
	mt := ctOctets
	if ct != "" {
		parsed, _, err := mime.ParseMediaType(ct)
		if err != nil && err != mime.ErrInvalidMediaParameter {
			parsed = strings.ToLower(strings.TrimSpace(strings.Split(ct, ";")[0]))
		}
		mt = parsed
	}
	h := sha256.New()
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(mt)))
	h.Write(n[:])
	h.Write([]byte(mt))
	h.Write(body)
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// dsdOffset is docs/DESIGN.md D2's offset token for byte position pos (segment 0).
func dsdOffset(pos int) string { return fmt.Sprintf("%016d_%016d", 0, pos) }

// binaryBlob is n bytes cycling through every byte value, starting at seed.
func binaryBlob(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i)
	}
	return b
}

// appendAll appends each message and returns the stream's offsets: [0] the tail before
// the first message (the stream's creation tail, read with HEAD), then the tail after each.
func (st *Stream) appendAll(msgs ...string) []string {
	ginkgo.GinkgoHelper()
	h := st.Head()
	Expect(h).To(HaveStatus(200))
	offsets := []string{h.Get(hNextOffset)}
	for _, m := range msgs {
		offsets = append(offsets, st.MustAppend(m))
	}
	return offsets
}

// startSlowPublish starts PUT {stream}/snapshot/{offset} whose body is sent in two parts:
// first at once, rest when finish is called. The response arrives on the returned channel.
func (st *Stream) startSlowPublish(offset, ct string, first, rest []byte) (finish func(), done <-chan *Response) {
	ginkgo.GinkgoHelper()
	req, spec, err := build(st.s.Ctx, "PUT", st.snapshotURL(offset), []Opt{CT(ct)})
	Expect(err).NotTo(HaveOccurred())
	pr, pw := io.Pipe()
	req.Body = pr
	req.ContentLength = -1
	st.s.onFinish(func() { _ = pw.CloseWithError(io.ErrUnexpectedEOF) })
	wrote := make(chan error, 1)
	go func() {
		_, err := pw.Write(first)
		wrote <- err
	}()
	ch := st.s.Async(func() *Response {
		r, err := st.s.c.do(req, spec)
		if err != nil {
			return &Response{Data: []byte(err.Error())}
		}
		return r
	})
	select {
	case err := <-wrote:
		Expect(err).NotTo(HaveOccurred(), "sending the first half of the snapshot")
	case <-time.After(st.s.longPollBudget()):
		ginkgo.Fail("the server did not read the first half of a snapshot upload")
	}
	return func() {
		go func() {
			_, _ = pw.Write(rest)
			_ = pw.Close()
		}()
	}, ch
}

// Spec: extension §2 (snapshots), §2.1-§2.6.
var _ = Section("x2", "X2 Snapshots", Ext("snapshot"), func() {
	ConformanceIt(MUST, Reqs{"X-2.2-04", "X-2.2-05", "X-2.2-01", "X-2.5-01", "X-2.5-02"}, "publishes a snapshot with 204 and a digest and serves it with the §2.5 headers", func(s *S) {
		st := s.Create("snap-publish", CT(ctText))
		off := st.appendAll("one|", "two|")
		blob := binaryBlob(300, 7)
		const ct = "application/vnd.kit.state; v=2"
		digest := st.MustPublishSnapshot(off[1], ct, blob)

		g := st.ReadSnapshot(off[1])
		Expect(g).To(HaveStatus(200))
		Expect(g.Data).To(Equal(blob), "the snapshot body")
		Expect(g).To(HaveHeader(hContentType, ct), "the Content-Type given at publish, as given")
		Expect(g).To(HaveHeader(hSnapshotOffset, off[1]))
		Expect(g).To(HaveHeader(hSnapshotDigest, digest), "the digest returned at publish")
		Expect(g).To(HaveHeader(hNextOffset, off[1]), "the snapshot covers [-1, offset): the next offset is the snapshot offset")
		Expect(g.Has(hUpToDate)).To(BeTrue(), "Stream-Up-To-Date is a §2.5 response header")
	})

	// Stream-Up-To-Date keeps its base-protocol meaning: true when nothing follows.
	ConformanceIt(MUST, Reqs{"X-2.5-01"}, "says Stream-Up-To-Date true on a snapshot at the tail and false when updates follow it", func(s *S) {
		st := s.Create("snap-uptodate", CT(ctText))
		off := st.appendAll("a", "b")
		st.MustPublishSnapshot(off[2], ctOctets, []byte("at tail"))
		Expect(st.ReadSnapshot(off[2])).To(BeTrueHeader(hUpToDate))
		st.MustAppend("c")
		Expect(st.ReadSnapshot(off[2])).To(HaveHeader(hUpToDate, MatchRegexp(`^(?i:false)$`)), "an append now follows the snapshot")
	})

	ConformanceIt(MUST, Reqs{"X-2.2-02", "X-2.2-01"}, "stores application/octet-stream when the publish has no Content-Type", func(s *S) {
		st := s.Create("snap-default-ct", CT(ctText))
		off := st.appendAll("x")
		r := st.PublishSnapshot(off[1], []byte("blob"), NoCT())
		Expect(r).To(HaveStatus(204))
		g := st.ReadSnapshot(off[1])
		Expect(g).To(HaveStatus(200))
		Expect(g).To(HaveHeader(hContentType, ctOctets))
		Expect(g).To(HaveBody("blob"))
	})

	ConformanceIt(MUST, Reqs{"X-2.2-05", "X-2.2-06"}, "republishes the same content type and body at the same offset with 204 and the same digest", func(s *S) {
		st := s.Create("snap-idempotent", CT(ctText))
		off := st.appendAll("x", "y")
		d1 := st.MustPublishSnapshot(off[1], ctJSON, []byte(`{"state":1}`))
		d2 := st.MustPublishSnapshot(off[1], ctJSON, []byte(`{"state":1}`))
		Expect(d2).To(Equal(d1))
		g := st.ReadSnapshot(off[1])
		Expect(g).To(HaveStatus(200))
		Expect(g).To(HaveBody(`{"state":1}`))
		Expect(g).To(HaveHeader(hSnapshotDigest, d1))
	})

	ConformanceIt(MUST, Reqs{"X-2.2-07"}, "answers 409 to different content at an already-published offset and keeps the first", func(s *S) {
		st := s.Create("snap-conflict", CT(ctText))
		off := st.appendAll("x", "y")
		d := st.MustPublishSnapshot(off[2], ctText, []byte("first"))
		Expect(st.PublishSnapshot(off[2], []byte("second"), CT(ctText))).To(HaveStatus(409), "a different body")
		Expect(st.PublishSnapshot(off[2], []byte("first"), CT(ctOctets))).To(HaveStatus(409), "the same body with a different content type")
		g := st.ReadSnapshot(off[2])
		Expect(g).To(HaveStatus(200))
		Expect(g).To(HaveBody("first"))
		Expect(g).To(HaveHeader(hContentType, ctText))
		Expect(g).To(HaveHeader(hSnapshotDigest, d))
	})

	ConformanceIt(MUST, Reqs{"X-2.2-03", "X-2.2-12"}, "publishes only when Stream-Snapshot-Match names the visible snapshot's digest, else 409", func(s *S) {
		st := s.Create("snap-match", CT(ctText))
		off := st.appendAll("a", "b", "c")
		d1 := st.MustPublishSnapshot(off[1], ctText, []byte("s1"))

		Expect(st.PublishSnapshot(off[2], []byte("s2"), CT(ctText), H(hSnapshotMatch, "sha256:"+strings.Repeat("0", 64)))).To(HaveStatus(409), "a digest that matches nothing")
		Expect(st.MustLatestSnapshot()).To(Equal(off[1]), "a refused publish leaves the visible snapshot")

		r := st.PublishSnapshot(off[2], []byte("s2"), CT(ctText), H(hSnapshotMatch, d1))
		Expect(r).To(HaveStatus(204), "the visible snapshot's digest")
		d2 := r.Get(hSnapshotDigest)
		Expect(st.MustLatestSnapshot()).To(Equal(off[2]))

		Expect(st.PublishSnapshot(off[3], []byte("s3"), CT(ctText), H(hSnapshotMatch, d1))).To(HaveStatus(409), "the digest of the superseded snapshot")
		Expect(st.PublishSnapshot(off[3], []byte("s3"), CT(ctText), H(hSnapshotMatch, d2))).To(HaveStatus(204))
	})

	ConformanceIt(MUST, Reqs{"X-2.2-03"}, "answers 409 to a Stream-Snapshot-Match when no snapshot is visible", func(s *S) {
		st := s.Create("snap-match-none", CT(ctText))
		off := st.appendAll("a")
		Expect(st.PublishSnapshot(off[1], []byte("s"), CT(ctText), H(hSnapshotMatch, snapshotDigest(ctText, []byte("s"))))).To(HaveStatus(409))
		Expect(st.LatestSnapshot()).To(HaveStatus(404), "nothing was published")
	})

	ConformanceIt(MUST, Reqs{"X-2.2-04"}, "answers 404 to a publish on a missing stream", func(s *S) {
		other := s.Create("snap-offset-source", CT(ctText))
		tail := other.MustAppend("x")
		missing := s.Stream("snap-missing")
		Expect(missing.PublishSnapshot(tail, []byte("s"), CT(ctText))).To(HaveStatus(404))
		Expect(missing.Head()).To(HaveStatus(404), "publishing never creates the stream")
	})

	ConformanceIt(MUST, Reqs{"X-2.2-04"}, "answers 400 to a snapshot offset that is not an offset", func(s *S) {
		st := s.Create("snap-bad-offset", CT(ctText))
		st.MustAppend("x")
		for _, bad := range []string{"not-an-offset", "zz"} {
			Expect(st.PublishSnapshot(bad, []byte("s"), CT(ctText))).To(HaveStatus(400), "offset %q", bad)
		}
		Expect(st.LatestSnapshot()).To(HaveStatus(404))
	})

	ConformanceIt(MUST, Reqs{"X-2.2-04"}, "answers 400 to an offset inside a message and 409 to one past the tail (D2)", Profile("dsd"), func(s *S) {
		st := s.Create("snap-d2", CT(ctText))
		st.MustAppend("hello")
		Expect(st.PublishSnapshot(dsdOffset(2), []byte("s"), CT(ctText))).To(HaveStatus(400), "mid-message")
		Expect(st.PublishSnapshot(dsdOffset(9), []byte("s"), CT(ctText))).To(HaveStatus(409), "past the tail")
		Expect(st.LatestSnapshot()).To(HaveStatus(404))
		Expect(st.PublishSnapshot(dsdOffset(5), []byte("s"), CT(ctText))).To(HaveStatus(204), "at the tail")
	})

	ConformanceIt(MUST, Reqs{"X-2.2-04", "X-2.2-10"}, "answers 410 to a publish below the retained offset", func(s *S) {
		st := s.Create("snap-gone", CT(ctText))
		off := st.appendAll("a", "b", "c")
		st.MustPublishSnapshot(off[2], ctText, []byte("ab"))
		st.MustRetain(off[2])
		Expect(st.PublishSnapshot(off[1], []byte("a"), CT(ctText))).To(HaveStatus(410))
		Expect(st.MustLatestSnapshot()).To(Equal(off[2]))
	})

	ConformanceIt(MUST, Reqs{"X-2.2-04"}, "answers 413 to a snapshot over the 32 MiB body limit (D5)", Profile("dsd"), func(s *S) {
		st := s.Create("snap-too-large", CT(ctText))
		off := st.appendAll("x")
		Expect(st.PublishSnapshot(off[1], make([]byte, 32<<20+1), CT(ctOctets))).To(HaveStatus(413))
		Expect(st.LatestSnapshot()).To(HaveStatus(404))
	})

	ConformanceIt(MUST, Reqs{"X-2.2-08"}, "keeps every offset readable after a publish: publishing never moves the retained offset", func(s *S) {
		st := s.Create("snap-no-retention", CT(ctText))
		off := st.appendAll("a|", "b|", "c|")
		st.MustPublishSnapshot(off[3], ctText, []byte("a|b|c|"))
		all, _ := st.CatchUp(offsetStart)
		Expect(string(all)).To(Equal("a|b|c|"), "catch-up from -1")
		for i, o := range off[:3] {
			Expect(st.Read(o)).To(HaveStatus(200), "catch-up at the offset before message %d", i)
		}
		Expect(st.LongPoll(off[1])).To(HaveBody("b|c|"))
		evs, c := st.sseCatchUp(off[0])
		c.Close()
		Expect(strings.Join(DataEvents(evs), "")).To(Equal("a|b|c|"), "SSE from the first offset")
	})

	ConformanceIt(MUST, Reqs{"X-2.3-01"}, "redirects GET {stream}/snapshot with 307 to {stream}/snapshot/{offset}", func(s *S) {
		st := s.Create("snap-redirect", CT(ctText))
		off := st.appendAll("a", "b")
		st.MustPublishSnapshot(off[1], ctText, []byte("state"))
		r := st.LatestSnapshot()
		Expect(r).To(HaveStatus(307))
		Expect(st.snapshotLocation(r)).To(Equal(off[1]))
		ref, _ := url.Parse(r.Get(hLocation))
		g := s.Do("GET", r.Request.URL.ResolveReference(ref).String())
		Expect(g).To(HaveStatus(200), "following the Location")
		Expect(g).To(HaveBody("state"))
	})

	ConformanceIt(MUST, Reqs{"X-2.3-01"}, "answers GET {stream}/snapshot with 404 when no snapshot exists", func(s *S) {
		st := s.Create("snap-none", CT(ctText))
		st.MustAppend("a")
		Expect(st.LatestSnapshot()).To(HaveStatus(404))
		Expect(s.Stream("snap-none-missing").LatestSnapshot()).To(HaveStatus(404), "a missing stream")
	})

	ConformanceIt(MUST, Reqs{"X-2.2-12", "X-2.3-01", "X-2.4-04"}, "replaces the visible snapshot at once: /snapshot, HEAD and reads name the newest", func(s *S) {
		st := s.Create("snap-replace", CT(ctText))
		off := st.appendAll("a", "b", "c")
		st.MustPublishSnapshot(off[1], ctText, []byte("one"))
		d2 := st.MustPublishSnapshot(off[2], "application/x-two", []byte("two"))
		Expect(st.MustLatestSnapshot()).To(Equal(off[2]))
		g := st.ReadSnapshot(off[2])
		Expect(g).To(HaveBody("two"))
		Expect(g).To(HaveHeader(hContentType, "application/x-two"))
		if h := st.Head(); h.Has(hSnapshotOffset) {
			Expect(h).To(HaveHeader(hSnapshotOffset, off[2]))
			Expect(h).To(HaveHeader(hSnapshotDigest, d2))
		}
	})

	ConformanceIt(SHOULD, Reqs{"X-2.4-01"}, "names the visible snapshot in HEAD's Stream-Snapshot-Offset", func(s *S) {
		st := s.Create("snap-head-should", CT(ctText))
		off := st.appendAll("a")
		st.MustPublishSnapshot(off[1], ctText, []byte("s"))
		Expect(st.Head()).To(HaveHeader(hSnapshotOffset, off[1]))
	})

	ConformanceIt(MUST, Reqs{"X-2.4-02", "X-2.4-04"}, "sends HEAD snapshot headers, when present, for the snapshot /snapshot resolves to, with its digest", func(s *S) {
		st := s.Create("snap-head", CT(ctText))
		off := st.appendAll("a", "b")
		st.MustPublishSnapshot(off[1], ctText, []byte("old"))
		d := st.MustPublishSnapshot(off[2], "application/x-new", []byte("new"))
		latest := st.MustLatestSnapshot()
		h := st.Head()
		Expect(h).To(HaveStatus(200))
		if !h.Has(hSnapshotOffset) {
			fmt.Fprintln(ginkgo.GinkgoWriter, "HEAD sends no Stream-Snapshot-Offset (a SHOULD, checked separately)")
			return
		}
		Expect(h).To(HaveHeader(hSnapshotOffset, latest), "GET /snapshot resolves to %q", latest)
		Expect(latest).To(Equal(off[2]), "the newest publish is visible")
		Expect(h).To(HaveHeader(hSnapshotDigest, d))
	})

	ConformanceIt(MUST, Reqs{"X-2.4-03"}, "sends no Stream-Snapshot-Offset on HEAD while no snapshot is visible", func(s *S) {
		st := s.Create("snap-head-none", CT(ctText))
		off := st.appendAll("a")
		Expect(st.Head()).To(HaveNoHeader(hSnapshotOffset))
		st.MustPublishSnapshot(off[1], ctText, []byte("s"))
		if d := st.DeleteSnapshot(off[1]); d.StatusCode >= 200 && d.StatusCode < 300 {
			Expect(st.LatestSnapshot()).To(HaveStatus(404), "the deleted snapshot is gone")
			Expect(st.Head()).To(HaveNoHeader(hSnapshotOffset), "after the snapshot was deleted (%d)", d.StatusCode)
		}
	})

	ConformanceIt(MUST, Reqs{"X-2.5-02"}, "answers 404 to GET of a snapshot that was never published", func(s *S) {
		st := s.Create("snap-read-missing", CT(ctText))
		off := st.appendAll("a", "b")
		Expect(st.ReadSnapshot(off[1])).To(HaveStatus(404), "no snapshot at all")
		st.MustPublishSnapshot(off[2], ctText, []byte("s"))
		Expect(st.ReadSnapshot(off[1])).To(HaveStatus(404), "another offset than the published one")
		Expect(s.Stream("snap-read-missing-stream").ReadSnapshot(off[1])).To(HaveStatus(404), "a missing stream")
	})

	ConformanceIt(MAY, Reqs{"X-2.2-13", "X-2.6-02"}, "serves a superseded snapshot unchanged or forgets it with 404", func(s *S) {
		st := s.Create("snap-superseded", CT(ctText))
		off := st.appendAll("a", "b")
		d1 := st.MustPublishSnapshot(off[1], "application/x-one", []byte("one"))
		st.MustPublishSnapshot(off[2], ctText, []byte("two"))
		g := st.ReadSnapshot(off[1])
		Expect(g).To(HaveStatus(200, 404))
		if g.StatusCode == 200 {
			Expect(g).To(HaveBody("one"))
			Expect(g).To(HaveHeader(hContentType, "application/x-one"))
			Expect(g).To(HaveHeader(hSnapshotDigest, d1))
		}
	})

	ConformanceIt(MUST, Reqs{"B-10-03", "X-2.5-01"}, "answers a snapshot read whose If-None-Match names its ETag with 304 and no body", func(s *S) {
		st := s.Create("snap-etag", CT(ctText))
		off := st.appendAll("a", "b")
		st.MustPublishSnapshot(off[1], ctText, []byte("S"))
		first := st.ReadSnapshot(off[1])
		Expect(first).To(HaveStatus(200))
		if etag := first.Get(hETag); etag != "" { // a server may send none: then there is nothing to honour
			Expect(st.ReadSnapshot(off[1], H(hIfNoneMatch, etag))).To(SatisfyAll(HaveStatus(304), HaveEmptyBody()))
			Expect(st.ReadSnapshot(off[1], H(hIfNoneMatch, `"other"`))).To(HaveBody("S"))
		}
	})

	ConformanceIt(MUST, Reqs{"X-2.6-01"}, "answers DELETE of a snapshot that does not exist with 404", func(s *S) {
		st := s.Create("snap-del-missing", CT(ctText))
		off := st.appendAll("a", "b")
		Expect(st.DeleteSnapshot(off[1])).To(HaveStatus(404), "no snapshot at all")
		st.MustPublishSnapshot(off[2], ctText, []byte("s"))
		Expect(st.DeleteSnapshot(off[1])).To(HaveStatus(404), "an offset never published")
		Expect(st.MustLatestSnapshot()).To(Equal(off[2]))
		Expect(s.Stream("snap-del-missing-stream").DeleteSnapshot(off[1])).To(HaveStatus(404), "a missing stream")
	})

	ConformanceIt(MUST, Reqs{"X-2.6-01"}, "answers DELETE of a superseded snapshot with 404 and keeps the visible one", func(s *S) {
		st := s.Create("snap-del-superseded", CT(ctText))
		off := st.appendAll("a", "b")
		st.MustPublishSnapshot(off[1], ctText, []byte("one"))
		st.MustPublishSnapshot(off[2], ctText, []byte("two"))
		Expect(st.DeleteSnapshot(off[1])).To(HaveStatus(404))
		Expect(st.MustLatestSnapshot()).To(Equal(off[2]))
		Expect(st.ReadSnapshot(off[2])).To(HaveBody("two"))
	})

	ConformanceIt(MUST, Reqs{"X-2.6-01", "X-3.4-03"}, "refuses with 409 to delete the visible snapshot once retention relies on it", func(s *S) {
		st := s.Create("snap-del-in-use", CT(ctText))
		off := st.appendAll("a", "b")
		st.MustPublishSnapshot(off[1], ctText, []byte("a"))
		st.MustRetain(off[1])
		Expect(st.DeleteSnapshot(off[1])).To(HaveStatus(409))
		Expect(st.MustLatestSnapshot()).To(Equal(off[1]))
		Expect(st.ReadSnapshot(off[1])).To(HaveBody("a"))
	})

	ConformanceIt(MUST, Reqs{"X-2.6-01"}, "refuses with 409 to delete the latest visible snapshot before retention has advanced too; it stays visible (D5)", Profile("dsd"), func(s *S) {
		st := s.Create("snap-del-latest", CT(ctText))
		off := st.appendAll("a", "b")
		st.MustPublishSnapshot(off[1], ctText, []byte("a"))
		Expect(st.DeleteSnapshot(off[1])).To(HaveStatus(409))
		Expect(st.MustLatestSnapshot()).To(Equal(off[1]))
		Expect(st.ReadSnapshot(off[1])).To(HaveBody("a"))
		Expect(st.Head()).To(HaveHeader(hSnapshotOffset, off[1]))
		st.MustPublishSnapshot(off[2], ctText, []byte("ab"))
		Expect(st.DeleteSnapshot(off[2])).To(HaveStatus(409), "the newer latest snapshot")
		Expect(st.DeleteSnapshot(off[1])).To(HaveStatus(404), "the superseded one")
	})

	ConformanceIt(MUST, Reqs{"X-2.1-02", "X-2.2-04"}, "accepts a snapshot at every offset an append or the create returned", func(s *S) {
		st := s.Create("snap-every-boundary", CT(ctOctets))
		msgs := []string{"\x00\x01", "--\r\n", "x", strings.Repeat("z", 1000)}
		off := st.appendAll(msgs...)
		for i, o := range off {
			body := []byte(fmt.Sprintf("state after %d messages", i))
			st.MustPublishSnapshot(o, ctOctets, body)
			Expect(st.MustLatestSnapshot()).To(Equal(o))
			Expect(st.ReadSnapshot(o)).To(HaveBody(string(body)))
		}
	})

	ConformanceIt(MUST, Reqs{"X-2.2-15", "X-2.2-16"}, "keeps appends flowing during a snapshot upload and folds nothing after its offset into it", func(s *S) {
		st := s.Create("snap-concurrent", CT(ctText))
		off := st.appendAll("before|")
		// The first half is larger than any client buffer, so the server has begun reading.
		blob := binaryBlob(256<<10, 3)
		finish, done := st.startSlowPublish(off[1], ctOctets, blob[:128<<10], blob[128<<10:])

		appended := s.Async(func() *Response { return st.Append("during|") })
		var a *Response
		select {
		case a = <-appended:
		case <-time.After(3 * time.Second):
			finish()
			ginkgo.Fail("an append waited more than 3 s while a snapshot upload was in progress (snapshot creation must not block appends)")
		}
		Expect(a).To(HaveStatus(200, 204), "the append during the upload")
		finish()
		p := s.Await(done)
		Expect(p.Response).NotTo(BeNil(), "the snapshot publish failed: %s", p.Text())
		Expect(p).To(HaveStatus(204), "the snapshot publish")

		g := st.ReadSnapshot(off[1])
		Expect(g).To(HaveStatus(200))
		Expect(g.Data).To(Equal(blob), "the snapshot holds exactly the published bytes")
		Expect(g).To(HaveHeader(hSnapshotOffset, off[1]))
		rest, _ := st.CatchUp(off[1])
		Expect(string(rest)).To(Equal("during|"), "the append after the snapshot offset stays an update")
	})

	ConformanceIt(MUST, Reqs{"X-2.2-11"}, "publishes snapshots and retention at a record ordinal on JSON streams", Ext("json-record-coordinates-v1"), func(s *S) {
		st := s.Create("snap-record", CT(ctJSON))
		first := st.MustAppend(`[{"r":0},{"r":1}]`)
		st.MustAppend(`{"r":2}`)

		r := s.Do("PUT", st.Ext+"/snapshot", Q("record", "2"), CT(ctJSON), Text(`{"folded":2}`))
		Expect(r).To(HaveStatus(204))
		Expect(r.Get(hSnapshotDigest)).NotTo(BeEmpty())
		Expect(st.MustLatestSnapshot()).To(Equal(first), "record 2 starts where the first append ended")
		Expect(st.ReadSnapshot(first)).To(HaveBody(`{"folded":2}`))

		Expect(s.Do("PUT", st.Ext+"/retention", Q("record", "2"))).To(HaveStatus(200, 204))
		Expect(st.Read(first)).To(SatisfyAll(HaveStatus(200), WithTransform(func(r *Response) []string {
			return compactMessages(MustJSONArray(r.Data))
		}, Equal([]string{`{"r":2}`}))), "the retained start, record 2")
		Expect(st.Read(offsetStart)).To(HaveStatus(410), "-1 lies before the retained start")
	})

	ConformanceIt(MUST, Reqs{"X-2.2-05", "X-2.2-06"}, "digests the normalized media type and the body as sha256, and compares Stream-Snapshot-Match exactly (D5)", Profile("dsd"), func(s *S) {
		st := s.Create("snap-digest", CT(ctText))
		off := st.appendAll("a", "b", "c")
		blob := binaryBlob(1000, 0)
		for i, ct := range []string{"", "Application/Vnd.Kit+JSON; charset=utf-8", ctText} {
			var opts []Opt
			if ct == "" {
				opts = append(opts, NoCT())
			} else {
				opts = append(opts, CT(ct))
			}
			r := st.PublishSnapshot(off[i+1], blob, opts...)
			Expect(r).To(HaveStatus(204))
			want := snapshotDigest(ct, blob)
			Expect(r).To(HaveHeader(hSnapshotDigest, want), "Content-Type %q", ct)
			Expect(st.ReadSnapshot(off[i+1])).To(HaveHeader(hSnapshotDigest, want))
		}
		d := snapshotDigest(ctText, blob)
		next := st.MustAppend("d")
		Expect(st.PublishSnapshot(next, []byte("x"), CT(ctText), H(hSnapshotMatch, strings.ToUpper(d)))).To(HaveStatus(409), "Stream-Snapshot-Match compares exactly")
		Expect(st.PublishSnapshot(next, []byte("x"), CT(ctText), H(hSnapshotMatch, d))).To(HaveStatus(204))
	})

	ConformanceIt(MUST, Reqs{"X-2.2-04", "X-2.4-03"}, "keeps snapshots and retention usable after close, and a re-created stream starts without a snapshot", Profile("dsd"), func(s *S) {
		st := s.Create("snap-closed", CT(ctText))
		off := st.appendAll("a", "b")
		st.MustClose()
		st.MustPublishSnapshot(off[2], ctText, []byte("ab"))
		st.MustRetain(off[1])
		Expect(st.Read(off[0])).To(HaveStatus(410))
		Expect(st.Delete()).To(HaveStatus(204))
		st.MustCreate(CT(ctText))
		Expect(st.LatestSnapshot()).To(HaveStatus(404))
		Expect(st.Head()).To(HaveNoHeader(hSnapshotOffset))
	})
})
