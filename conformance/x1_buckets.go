package conformance

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// BucketID returns a fresh valid bucket id (extension §1.1), not yet created.
func (s *S) BucketID() string {
	return fmt.Sprintf("%s%s-%d", strings.ToLower(s.rt.cfg.NamePrefix), s.rt.runID, s.rt.nextSerial())
}

// BucketURL is {base}/{id}.
func (s *S) BucketURL(id string) string { return s.rt.bucketURL(id) }

// Bucket creates a fresh bucket (failing the spec unless PUT answers 201) and registers
// its deletion after the spec's streams.
func (s *S) Bucket() string {
	ginkgo.GinkgoHelper()
	id := s.BucketID()
	s.registerBucket(s.BucketURL(id))
	Expect(s.Do("PUT", s.BucketURL(id))).To(HaveStatus(201), "creating bucket %s", id)
	return id
}

// StreamIn returns a handle on stream name (raw, unescaped) in bucket, registered for
// deletion.
func (s *S) StreamIn(bucket, name string) *Stream {
	u := s.BucketURL(bucket) + "/" + url.PathEscape(name)
	s.mu.Lock()
	s.streams = append(s.streams, u)
	s.mu.Unlock()
	pu, _ := url.Parse(u)
	return &Stream{s: s, Name: name, URL: u, Path: pu.EscapedPath()}
}

// listing is the bucket listing body (extension §1.4).
type listing struct {
	BucketID    *string        `json:"bucket_id"`
	Prefix      *string        `json:"prefix"`
	StreamCount *int           `json:"stream_count"`
	Streams     []listingEntry `json:"streams"`
	NextCursor  *string        `json:"next_cursor"`
	HasMore     *bool          `json:"has_more"`
}

type listingEntry struct {
	StreamID      string          `json:"stream_id"`
	Status        string          `json:"status"`
	ContentType   string          `json:"content_type"`
	TailOffset    json.RawMessage `json:"tail_offset"`
	CreatedAtMS   *int64          `json:"created_at_ms"`
	LastWriteAtMS *int64          `json:"last_write_at_ms"`
}

// list sends GET /{bucket}/streams with opts and decodes a 200 listing.
func (s *S) list(bucket string, opts ...Opt) listing {
	ginkgo.GinkgoHelper()
	r := s.Do("GET", s.BucketURL(bucket)+"/streams", opts...)
	Expect(r).To(HaveStatus(200))
	Expect(r).To(HaveMediaType(ctJSON))
	var l listing
	Expect(json.Unmarshal(r.Data, &l)).To(Succeed(), "listing %q", r.Text())
	Expect(l.BucketID).NotTo(BeNil(), "listing without bucket_id: %s", r.Text())
	Expect(*l.BucketID).To(Equal(bucket))
	Expect(l.HasMore).NotTo(BeNil(), "listing without has_more: %s", r.Text())
	Expect(l.StreamCount).NotTo(BeNil(), "listing without stream_count: %s", r.Text())
	return l
}

func ids(l listing) []string {
	out := []string{}
	for _, e := range l.Streams {
		out = append(out, e.StreamID)
	}
	return out
}

// Spec: extension §1 (buckets), on the bucketed surface.
var _ = Section("x1", "X1 Buckets", Ext("buckets"), func() {
	ConformanceIt(MUST, Reqs{"X-1.2-01", "X-1.2-03", "X-1.1-02"}, "creates a bucket with 201 and answers 409 to creating it again", func(s *S) {
		id := s.BucketID()
		s.registerBucket(s.BucketURL(id))
		Expect(s.Do("PUT", s.BucketURL(id))).To(HaveStatus(201))
		Expect(s.Do("PUT", s.BucketURL(id))).To(HaveStatus(409))
		Expect(s.Do("GET", s.BucketURL(id))).To(HaveStatus(200))
	})

	ConformanceIt(MUST, Reqs{"X-1.3-01"}, "describes a bucket with its id and stream count", func(s *S) {
		id := s.Bucket()
		r := s.Do("GET", s.BucketURL(id))
		Expect(r).To(HaveStatus(200))
		Expect(r).To(HaveMediaType(ctJSON))
		var meta map[string]any
		Expect(json.Unmarshal(r.Data, &meta)).To(Succeed(), "bucket body %q", r.Text())
		Expect(meta).To(HaveKeyWithValue("bucket_id", id))
		Expect(meta).To(HaveKeyWithValue("streams", float64(0)))
		s.StreamIn(id, "a").MustCreate()
		s.StreamIn(id, "b").MustCreate()
		Expect(json.Unmarshal(s.Do("GET", s.BucketURL(id)).Data, &meta)).To(Succeed())
		Expect(meta).To(HaveKeyWithValue("streams", float64(2)))
	})

	ConformanceIt(MUST, Reqs{"X-1.3-01", "X-1.1-01"}, "answers GET of a missing bucket with 404 and of an invalid id with 400", func(s *S) {
		Expect(s.Do("GET", s.BucketURL(s.BucketID()))).To(HaveStatus(404))
		Expect(s.Do("GET", s.BucketURL("BAD!"))).To(HaveStatus(400))
	})

	ConformanceIt(MUST, Reqs{"X-1.1-01", "X-1.2-03"}, "rejects bucket ids outside ^[a-z0-9_-]{4,64}$ with 400", func(s *S) {
		for _, bad := range []string{"abc", strings.Repeat("a", 65), "ABCD", "ab.cd", "ab~cd", "ab cd", "ab+cd", "abcé"} {
			u := s.BucketURL(bad)
			s.registerBucket(u)
			Expect(s.Do("PUT", u)).To(HaveStatus(400), "bucket id %q", bad)
		}
	})

	ConformanceIt(MUST, Reqs{"X-1.1-01", "X-1.2-03"}, "accepts bucket ids of 4 and 64 characters from the whole alphabet", func(s *S) {
		long := s.BucketID() + "_-"
		long += strings.Repeat("z", 64-len(long))
		s.registerBucket(s.BucketURL(long))
		Expect(s.Do("PUT", s.BucketURL(long))).To(HaveStatus(201), "64-character id %q", long)
		short := randomHex(2)
		s.registerBucket(s.BucketURL(short))
		Expect(s.Do("PUT", s.BucketURL(short))).To(HaveStatus(201, 409), "4-character id %q is valid (409: it exists)", short)
	})

	ConformanceIt(MUST, Reqs{"X-1.5-01", "X-1.5-02"}, "deletes an empty bucket with 204 and refuses a non-empty one with 409", func(s *S) {
		id := s.Bucket()
		st := s.StreamIn(id, "keep")
		st.MustCreate()
		Expect(s.Do("DELETE", s.BucketURL(id))).To(HaveStatus(409))
		Expect(st.Head()).To(HaveStatus(200), "a refused bucket delete keeps its streams")
		Expect(st.Delete()).To(HaveStatus(204))
		Expect(s.Do("DELETE", s.BucketURL(id))).To(HaveStatus(204))
		Expect(s.Do("GET", s.BucketURL(id))).To(HaveStatus(404))
	})

	ConformanceIt(MUST, Reqs{"X-1.5-02"}, "answers DELETE of a missing bucket with 404 and of an invalid id with 400", func(s *S) {
		Expect(s.Do("DELETE", s.BucketURL(s.BucketID()))).To(HaveStatus(404))
		Expect(s.Do("DELETE", s.BucketURL("BAD!"))).To(HaveStatus(400))
	})

	ConformanceIt(MUST, Reqs{"X-1.2-02", "X-1.6-02"}, "answers stream operations under a missing bucket with 404 and creates no bucket", func(s *S) {
		id := s.BucketID()
		s.registerBucket(s.BucketURL(id))
		st := s.StreamIn(id, "orphan")
		Expect(st.Put(CT(ctText))).To(HaveStatus(404))
		Expect(s.Do("GET", s.BucketURL(id))).To(HaveStatus(404), "PUT of a stream must not create its bucket")
		Expect(st.Append("x", CT(ctText))).To(HaveStatus(404))
		Expect(st.Read(offsetStart)).To(HaveStatus(404))
		Expect(st.Head()).To(HaveStatus(404))
		Expect(st.Delete()).To(HaveStatus(404))
		Expect(st.LongPoll(offsetStart)).To(HaveStatus(404))
	})

	ConformanceIt(MUST, Reqs{"X-1.6-01", "B-11-01"}, "serves the base stream operations under {base}/{bucket}/{stream}", func(s *S) {
		id := s.Bucket()
		st := s.StreamIn(id, "ops")
		created := st.Put(CT(ctText))
		Expect(created).To(HaveStatus(201))
		loc, err := url.Parse(created.Get(hLocation))
		Expect(err).NotTo(HaveOccurred())
		Expect(loc.EscapedPath()).To(HaveSuffix("/" + id + "/ops"))
		tail := st.MustAppend("hello")
		Expect(st.Read(offsetStart)).To(HaveBody("hello"))
		Expect(st.Head()).To(HaveHeader(hNextOffset, tail))
		Expect(st.LongPoll(offsetStart)).To(HaveBody("hello"))
		evs, c := st.sseCatchUp(offsetStart)
		c.Close()
		Expect(DataEvents(evs)).To(Equal([]string{"hello"}))
		Expect(st.MustClose()).To(BeTrueHeader(hClosed))
		Expect(st.Delete()).To(HaveStatus(204))
		Expect(st.Head()).To(HaveStatus(404))
	})

	ConformanceIt(MUST, Reqs{"X-1.6-01"}, "keeps streams with the same id in different buckets apart", func(s *S) {
		a, b := s.StreamIn(s.Bucket(), "same"), s.StreamIn(s.Bucket(), "same")
		a.MustCreate(CT(ctText))
		b.MustCreate(CT(ctJSON))
		a.MustAppend("in a")
		Expect(b.Read(offsetStart)).To(HaveBody("[]"))
		Expect(a.Delete()).To(HaveStatus(204))
		Expect(b.Head()).To(HaveStatus(200))
	})

	ConformanceIt(MUST, Reqs{"X-1.4-04", "X-1.4-05", "X-1.4-01"}, "lists a bucket's streams sorted by id with their metadata", func(s *S) {
		start := time.Now()
		id := s.Bucket()
		types := map[string]string{"user-b": ctText, "user-a": ctText, "other": ctJSON, "user-c": ctOctets}
		for _, n := range []string{"user-b", "user-a", "other", "user-c"} {
			s.StreamIn(id, n).MustCreate(CT(types[n]))
		}
		closed := s.StreamIn(id, "user-a")
		closed.ContentType = ctText
		tailA := closed.MustAppend("abc")
		closed.MustClose()

		l := s.list(id)
		Expect(ids(l)).To(Equal([]string{"other", "user-a", "user-b", "user-c"}))
		Expect(*l.HasMore).To(BeFalse())
		Expect(*l.StreamCount).To(Equal(4))
		byID := map[string]listingEntry{}
		for _, e := range l.Streams {
			byID[e.StreamID] = e
			Expect(e.CreatedAtMS).NotTo(BeNil(), "%s: created_at_ms", e.StreamID)
			Expect(e.LastWriteAtMS).NotTo(BeNil(), "%s: last_write_at_ms", e.StreamID)
			Expect(*e.CreatedAtMS).To(BeNumerically("~", start.UnixMilli(), time.Hour.Milliseconds()), "%s: created_at_ms", e.StreamID)
			Expect(*e.LastWriteAtMS).To(BeNumerically(">=", *e.CreatedAtMS), "%s: last_write_at_ms", e.StreamID)
			Expect(e.TailOffset).NotTo(BeEmpty(), "%s: tail_offset", e.StreamID)
		}
		for n, ct := range types {
			Expect(byID[n].ContentType).To(Equal(ct), "%s: content_type", n)
		}
		Expect(byID["user-b"].Status).To(Equal("Open"))
		Expect(byID["user-a"].Status).NotTo(Equal("Open"), "a closed stream is not listed as Open")
		var tail any
		Expect(json.Unmarshal(byID["user-a"].TailOffset, &tail)).To(Succeed())
		if str, ok := tail.(string); ok {
			Expect(str).To(Equal(tailA), "a string tail_offset is the stream's tail offset")
		}
	})

	ConformanceIt(MUST, Reqs{"X-1.4-01"}, "filters the listing by prefix", func(s *S) {
		id := s.Bucket()
		for _, n := range []string{"user-1", "user-2", "usex", "admin"} {
			s.StreamIn(id, n).MustCreate()
		}
		l := s.list(id, Q("prefix", "user-"))
		Expect(ids(l)).To(Equal([]string{"user-1", "user-2"}))
		Expect(l.Prefix).NotTo(BeNil())
		Expect(*l.Prefix).To(Equal("user-"))
		Expect(ids(s.list(id, Q("prefix", "nobody")))).To(BeEmpty())
		Expect(ids(s.list(id))).To(HaveLen(4))
	})

	ConformanceIt(MUST, Reqs{"X-1.4-02", "X-1.4-03", "X-1.4-04"}, "pages with limit, has_more and next_cursor, after being exclusive", func(s *S) {
		id := s.Bucket()
		names := []string{"s1", "s2", "s3", "s4", "s5"}
		for _, n := range names {
			s.StreamIn(id, n).MustCreate()
		}
		var seen []string
		after := ""
		for page := 0; page < 10; page++ {
			opts := []Opt{Q("limit", "2")}
			if after != "" {
				opts = append(opts, Q("after", after))
			}
			l := s.list(id, opts...)
			Expect(len(l.Streams)).To(BeNumerically("<=", 2))
			seen = append(seen, ids(l)...)
			if !*l.HasMore {
				break
			}
			Expect(l.NextCursor).NotTo(BeNil(), "has_more without next_cursor")
			after = *l.NextCursor
		}
		Expect(seen).To(Equal(names), "paging with next_cursor visits every stream once, in order")
		Expect(ids(s.list(id, Q("after", "s2")))).To(Equal([]string{"s3", "s4", "s5"}), "after is exclusive")
		Expect(ids(s.list(id, Q("after", "s2"), Q("limit", "1")))).To(Equal([]string{"s3"}))
	})

	ConformanceIt(MUST, Reqs{"X-1.4-03", "X-1.4-06"}, "rejects a limit outside 1..1000 with 400", func(s *S) {
		id := s.Bucket()
		for _, bad := range []string{"0", "1001", "-1", "abc", "1.5"} {
			Expect(s.Do("GET", s.BucketURL(id)+"/streams", Q("limit", bad))).To(HaveStatus(400), "limit=%q", bad)
		}
		for _, ok := range []string{"1", "1000"} {
			Expect(s.Do("GET", s.BucketURL(id)+"/streams", Q("limit", ok))).To(HaveStatus(200), "limit=%s", ok)
		}
	})

	ConformanceIt(MUST, Reqs{"X-1.4-06"}, "answers a listing of a missing bucket with 404 and of an invalid id with 400", func(s *S) {
		Expect(s.Do("GET", s.BucketURL(s.BucketID())+"/streams")).To(HaveStatus(404))
		Expect(s.Do("GET", s.BucketURL("BAD!")+"/streams")).To(HaveStatus(400))
	})

	ConformanceIt(MUST, Reqs{"X-1.1-07"}, "reserves the stream id streams for the listing", func(s *S) {
		id := s.Bucket()
		r := s.Do("PUT", s.BucketURL(id)+"/streams", CT(ctText))
		Expect(r.StatusCode).To(BeNumerically(">=", 400), "PUT /{bucket}/streams must not create a stream: %s", r)
		Expect(r.StatusCode).To(BeNumerically("<", 500), "PUT /{bucket}/streams: %s", r)
		Expect(s.list(id).Streams).To(BeEmpty())
	})

	ConformanceIt(MUST, Reqs{"X-1.1-03"}, "accepts any UTF-8 stream id", func(s *S) {
		id := s.Bucket()
		name := "naïve ☃ 日本 %41 +&=?"
		st := s.StreamIn(id, name)
		st.MustCreate()
		st.MustAppend("unicode")
		Expect(st.Read(offsetStart)).To(HaveBody("unicode"))
		Expect(ids(s.list(id))).To(Equal([]string{name}))
	})

	ConformanceIt(MUST, Reqs{"X-1.1-04", "X-1.1-06"}, "limits {bucket}/{stream} to 122 bytes", func(s *S) {
		id := s.Bucket()
		room := 122 - len(id) - 1
		fits := strings.Repeat("é", room/2) + strings.Repeat("x", room%2)
		Expect(len(fits)).To(Equal(room))
		s.StreamIn(id, fits).MustCreate()
		for _, tooLong := range []string{fits + "x", strings.Repeat("y", 123)} {
			st := s.StreamIn(id, tooLong)
			r := st.Put(CT(ctText))
			Expect(r.StatusCode).To(BeNumerically(">=", 400), "a %d-byte stream id: %s", len(tooLong), r)
			Expect(r.StatusCode).To(BeNumerically("<", 500), "a %d-byte stream id: %s", len(tooLong), r)
		}
		Expect(ids(s.list(id))).To(Equal([]string{fits}))
	})

	ConformanceIt(MUST, Reqs{"X-1.1-05"}, "rejects stream ids containing /, NUL or ..", func(s *S) {
		id := s.Bucket()
		for _, bad := range []string{"a/b", "a\x00b", "a..b", "..", "x.."} {
			u := s.BucketURL(id) + "/" + url.PathEscape(bad)
			r := s.Do("PUT", u, CT(ctText))
			Expect(r.StatusCode).To(BeNumerically(">=", 400), "stream id %q: %s", bad, r)
			Expect(r.StatusCode).To(BeNumerically("<", 500), "stream id %q: %s", bad, r)
			s.deleteLater(u)
		}
		Expect(s.list(id).Streams).To(BeEmpty())
	})

	ConformanceIt(MUST, Reqs{"X-1.1-04", "X-1.1-05", "X-1.1-01"}, "answers invalid bucket and stream ids with exactly 400", Profile("dsd"), func(s *S) {
		id := s.Bucket()
		for _, bad := range []string{"a/b", "a\x00b", "a..b", strings.Repeat("y", 123)} {
			u := s.BucketURL(id) + "/" + url.PathEscape(bad)
			s.deleteLater(u)
			Expect(s.Do("PUT", u, CT(ctText))).To(HaveStatus(400), "stream id %q", bad)
		}
		Expect(s.Do("PUT", s.BucketURL("BAD!")+"/x", CT(ctText))).To(HaveStatus(400), "invalid bucket id with a stream")
	})

	ConformanceIt(MUST, Reqs{"X-1.1-05", "X-1.1-01", "B-6-01"}, "refuses the stream id '.' and the bucket id __ds with 400 naming the id (D1)", Profile("dsd"), func(s *S) {
		id := s.Bucket()
		for _, dot := range []string{".", "%2E"} { // a dot segment is removed by clients and proxies (RFC 3986 §5.2.4)
			u := s.BucketURL(id) + "/" + dot
			s.deleteLater(u)
			r := s.Do("PUT", u, CT(ctText))
			Expect(r).To(HaveStatus(400), "stream id %q", dot)
			Expect(errorCodeOf(r)).To(Equal("INVALID_STREAM_ID"), "stream id %q", dot)
		}
		Expect(s.list(id).Streams).To(BeEmpty())
		s.registerBucket(s.BucketURL("__ds"))
		r := s.Do("PUT", s.BucketURL("__ds"))
		Expect(r).To(HaveStatus(400), "__ds is the reserved subscription namespace, not a bucket")
		Expect(errorCodeOf(r)).To(Equal("INVALID_BUCKET_ID"))
	})

	ConformanceIt(MUST, Reqs{"X-1.4-04", "X-1.4-02"}, "reports tail_offset as the stream's offset string and pages with the last id as cursor (D2)", Profile("dsd"), func(s *S) {
		id := s.Bucket()
		names := []string{"p1", "p2", "p3"}
		tails := map[string]string{}
		for _, n := range names {
			st := s.StreamIn(id, n)
			st.MustCreate()
			tails[n] = st.MustAppend("data-" + n)
		}
		l := s.list(id, Q("limit", "2"))
		Expect(*l.HasMore).To(BeTrue())
		Expect(*l.NextCursor).To(Equal("p2"))
		for _, e := range l.Streams {
			var tail string
			Expect(json.Unmarshal(e.TailOffset, &tail)).To(Succeed(), "tail_offset %s is not a string", e.TailOffset)
			Expect(tail).To(Equal(tails[e.StreamID]))
		}
		sorted := append([]string(nil), names...)
		sort.Strings(sorted)
		Expect(ids(s.list(id))).To(Equal(sorted))
	})
})

// deleteLater registers a raw URL for deletion at the end of the spec.
func (s *S) deleteLater(u string) {
	s.mu.Lock()
	s.streams = append(s.streams, u)
	s.mu.Unlock()
}
