package conformance

import (
	"fmt"
	"strings"

	. "github.com/onsi/gomega"
)

// percentEncodeAll percent-encodes every byte of s, even those that need no encoding
// (upper-case hex, or lower-case with lower set), as a client may (RFC 3986 §2.1).
func percentEncodeAll(s string, lower bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if lower {
			fmt.Fprintf(&b, "%%%02x", s[i])
		} else {
			fmt.Fprintf(&b, "%%%02X", s[i])
		}
	}
	return b.String()
}

// Spec: extension §8 (URL encoding of offsets in path segments).
var _ = Section("x8", "X8 URL encoding", Ext("snapshot"), func() {
	ConformanceIt(MUST, Reqs{"X-8-02", "X-2.3-01", "X-2.5-01"}, "decodes percent-encoded offsets in snapshot paths, even characters that need no encoding", func(s *S) {
		st := s.Create("url-snapshot", CT(ctText))
		off := st.appendAll("a", "b")
		enc := percentEncodeAll(off[1], false)
		r := s.Do("PUT", st.Ext+"/snapshot/"+enc, CT(ctText), Text("encoded"))
		Expect(r).To(HaveStatus(204), "PUT %s", enc)
		Expect(st.MustLatestSnapshot()).To(Equal(off[1]), "the Location names the decoded offset")
		plain := st.ReadSnapshot(off[1])
		Expect(plain).To(HaveBody("encoded"), "read back at the plain offset")
		Expect(plain).To(HaveHeader(hSnapshotOffset, off[1]), "Stream-Snapshot-Offset is the decoded token")
		Expect(plain).To(HaveHeader(hSnapshotDigest, r.Get(hSnapshotDigest)))
		g := s.Do("GET", st.Ext+"/snapshot/"+percentEncodeAll(off[1], true))
		Expect(g).To(HaveBody("encoded"), "read back with lower-case percent-encoding")
		Expect(g).To(HaveHeader(hSnapshotOffset, off[1]))
	})

	ConformanceIt(MUST, Reqs{"X-8-02", "X-2.2-06"}, "treats an encoded and a plain offset as the same snapshot offset", func(s *S) {
		st := s.Create("url-same", CT(ctText))
		off := st.appendAll("a")
		d := st.MustPublishSnapshot(off[1], ctText, []byte("s"))
		r := s.Do("PUT", st.Ext+"/snapshot/"+percentEncodeAll(off[1], true), CT(ctText), Text("s"))
		Expect(r).To(HaveStatus(204), "republishing through the encoded path")
		Expect(r).To(HaveHeader(hSnapshotDigest, d))
		Expect(s.Do("PUT", st.Ext+"/snapshot/"+percentEncodeAll(off[1], false), CT(ctText), Text("other"))).To(HaveStatus(409), "different content at the same, encoded, offset")
	})

	ConformanceIt(MUST, Reqs{"X-8-02", "X-2.2-10"}, "decodes percent-encoded offsets in retention paths", func(s *S) {
		st := s.Create("url-retention", CT(ctText))
		off := st.appendAll("a|", "b|")
		st.MustPublishSnapshot(off[1], ctText, []byte("a|"))
		Expect(s.Do("PUT", st.Ext+"/retention/"+percentEncodeAll(off[1], false))).To(HaveStatus(200, 204))
		Expect(st.Read(off[0])).To(HaveStatus(410))
		Expect(st.Read(off[1])).To(HaveBody("b|"))
	})

	ConformanceIt(MUST, Reqs{"X-8-02", "X-2.6-01"}, "decodes percent-encoded offsets in snapshot DELETE", func(s *S) {
		st := s.Create("url-delete", CT(ctText))
		off := st.appendAll("a|", "b|")
		st.MustPublishSnapshot(off[1], ctText, []byte("a|"))
		st.MustRetain(off[1])
		Expect(s.Do("DELETE", st.Ext+"/snapshot/"+percentEncodeAll(off[1], true))).To(HaveStatus(409), "the visible snapshot that retention relies on")
		Expect(s.Do("DELETE", st.Ext+"/snapshot/"+percentEncodeAll(off[2], false))).To(HaveStatus(404), "an offset without snapshot")
	})
})
