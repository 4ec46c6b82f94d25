package conformance

import (
	"encoding/json"
	"net/url"

	. "github.com/onsi/gomega"
)

// errorCodeOf is the code of a D7 error body ("" when the body is not one).
func errorCodeOf(r *Response) string {
	var body struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(r.Data, &body)
	return body.Error.Code
}

// Spec: base protocol §6 (digest B-6-01): paths are root-relative and may contain '/'
// (the upstream suite's subscription tests create events/... streams); DESIGN D1 amended:
// on the flat surface the whole path is the name, on the bucketed surface ids have no '/'.
var _ = Section("6.1", "6.1 Stream paths", func() {
	ConformanceIt(MUST, Reqs{"B-6-01"}, "serves slash-containing stream names on the flat surface and refuses them as bucketed ids (D1)", Profile("dsd"), func(s *S) {
		if s.rt.cfg.Surface == SurfaceBucketed {
			r := s.Do("PUT", s.rt.streamURL(s.Name("a")+"/b"), CT(ctText))
			Expect(r).To(HaveStatus(400, 404), "a bucketed stream id has no '/' (extension §1.1)")
			r = s.Do("PUT", s.rt.cfg.BaseURL+"/"+s.rt.bucket+"/"+url.PathEscape(s.Name("a"))+"%2Fb", CT(ctText))
			Expect(r).To(HaveStatus(400), "an escaped '/' in a bucketed id")
			Expect(errorCodeOf(r)).To(Equal("INVALID_STREAM_ID"))
			return
		}
		dir := s.Name("dir")
		u := s.rt.cfg.BaseURL + s.rt.cfg.StreamPath + url.PathEscape(dir) + "/sub/leaf"
		s.trackURL(u)
		Expect(s.Do("PUT", u, CT(ctText), Text("x"))).To(HaveStatus(201))
		Expect(s.Do("POST", u, CT(ctText), Text("y"))).To(HaveStatus(204))
		Expect(s.Do("GET", u, Q("offset", offsetStart))).To(HaveBody("xy"))
		Expect(s.Do("HEAD", s.rt.cfg.BaseURL+s.rt.cfg.StreamPath+url.PathEscape(dir)+"/sub")).To(HaveStatus(404), "a prefix of a name is another stream")
		if cb := s.rt.cfg.CompatBucket; cb != "" {
			l := s.Do("GET", s.rt.cfg.BaseURL+"/"+url.PathEscape(cb)+"/streams", Q("prefix", dir+"/"))
			Expect(l).To(HaveStatus(200))
			Expect(l.Text()).To(ContainSubstring(`"stream_id":"`+dir+`/sub/leaf"`), "slash names are listed in the compat bucket")
		}
		for _, bad := range []string{"/a//b", "/a/./b", "/a/%2E%2E/b", "%2Fb", "/"} {
			r := s.Do("PUT", s.rt.cfg.BaseURL+s.rt.cfg.StreamPath+url.PathEscape(s.Name("bad"))+bad, CT(ctText))
			Expect(r).To(HaveStatus(400), "name with %q", bad)
			Expect(errorCodeOf(r)).To(Equal("INVALID_STREAM_ID"), "name with %q", bad)
		}
	})
})
