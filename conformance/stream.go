package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Stream is a handle on one stream URL of the spec (created or not).
type Stream struct {
	s *S
	// Name is the stream name (bucket-local id on the bucketed surface).
	Name string
	// URL is the absolute stream URL.
	URL string
	// Path is URL's escaped path (what Stream-Forked-From and Location refer to).
	Path string
	// Ext is the URL under which the extension sub-resources live (URL, or on the flat
	// surface {base}/{compat bucket}/{name}, DESIGN D1 amended); ExtPath is its path.
	Ext, ExtPath string
	// ContentType is what the kit created the stream with ("" until created).
	ContentType string
}

// Put sends PUT to the stream URL with opts as given (no defaults).
func (st *Stream) Put(opts ...Opt) *Response {
	ginkgo.GinkgoHelper()
	return st.s.Do("PUT", st.URL, opts...)
}

// MustCreate sends PUT (Content-Type text/plain unless opts set one) and fails the spec
// unless the server answers 201. It records the content type for later appends.
func (st *Stream) MustCreate(opts ...Opt) *Response {
	ginkgo.GinkgoHelper()
	r := st.s.Do("PUT", st.URL, append([]Opt{CT(ctText)}, opts...)...)
	Expect(r.StatusCode).To(Equal(201), "creating %s: %s", st.URL, r)
	st.ContentType = r.Request.Header.Get(hContentType)
	if st.ContentType == "" {
		st.ContentType = ctOctets
	}
	return r
}

// Append POSTs body with the stream's content type (opts may override or drop it).
func (st *Stream) Append(body string, opts ...Opt) *Response {
	ginkgo.GinkgoHelper()
	return st.AppendBytes([]byte(body), opts...)
}

// AppendBytes is Append for binary bodies.
func (st *Stream) AppendBytes(body []byte, opts ...Opt) *Response {
	ginkgo.GinkgoHelper()
	ct := st.ContentType
	if ct == "" {
		ct = ctText
	}
	return st.s.Do("POST", st.URL, append([]Opt{CT(ct), Body(body)}, opts...)...)
}

// MustAppend appends and fails the spec unless the server answers 2xx. It returns the
// new tail (Stream-Next-Offset).
func (st *Stream) MustAppend(body string, opts ...Opt) string {
	ginkgo.GinkgoHelper()
	r := st.Append(body, opts...)
	Expect(r.StatusCode).To(BeElementOf(200, 204), "appending to %s: %s", st.URL, r)
	Expect(r.Get(hNextOffset)).NotTo(BeEmpty(), "append response without %s", hNextOffset)
	return r.Get(hNextOffset)
}

// Post sends POST with opts as given (no defaults).
func (st *Stream) Post(opts ...Opt) *Response {
	ginkgo.GinkgoHelper()
	return st.s.Do("POST", st.URL, opts...)
}

// Close sends a close-only POST (Stream-Closed: true, empty body, no Content-Type).
func (st *Stream) Close(opts ...Opt) *Response {
	ginkgo.GinkgoHelper()
	return st.s.Do("POST", st.URL, append([]Opt{H(hClosed, "true")}, opts...)...)
}

// MustClose closes the stream and fails the spec unless the server answers 204.
func (st *Stream) MustClose() *Response {
	ginkgo.GinkgoHelper()
	r := st.Close()
	Expect(r.StatusCode).To(Equal(204), "closing %s: %s", st.URL, r)
	return r
}

// Head sends HEAD.
func (st *Stream) Head(opts ...Opt) *Response {
	ginkgo.GinkgoHelper()
	return st.s.Do("HEAD", st.URL, opts...)
}

// Delete sends DELETE.
func (st *Stream) Delete(opts ...Opt) *Response {
	ginkgo.GinkgoHelper()
	return st.s.Do("DELETE", st.URL, opts...)
}

// Read sends a catch-up GET ?offset=<offset> (no offset parameter when offset is "").
func (st *Stream) Read(offset string, opts ...Opt) *Response {
	ginkgo.GinkgoHelper()
	return st.s.Do("GET", st.URL, append(offsetOpts(offset), opts...)...)
}

// Get sends GET with opts as given.
func (st *Stream) Get(opts ...Opt) *Response {
	ginkgo.GinkgoHelper()
	return st.s.Do("GET", st.URL, opts...)
}

// LongPoll sends GET ?offset=<offset>&live=long-poll, allowing the server's long-poll
// timeout plus slack before the client gives up.
func (st *Stream) LongPoll(offset string, opts ...Opt) *Response {
	ginkgo.GinkgoHelper()
	ctx, cancel := context.WithTimeout(st.s.Ctx, st.s.longPollBudget())
	defer cancel()
	all := append(offsetOpts(offset), Q("live", "long-poll"))
	r, err := st.s.TryDo(ctx, "GET", st.URL, append(all, opts...)...)
	Expect(err).NotTo(HaveOccurred(), "long-poll %s at %q: %s", st.URL, offset, st.s.longPollHint())
	return r
}

// longPollBudget is how long a client waits for a long-poll answer.
func (s *S) longPollBudget() time.Duration { return 3*s.LongPollTimeout() + 3*time.Second }

// longPollHint explains a long-poll that got no answer within the budget: most often
// the server's long-poll timeout is longer than the one the kit was told.
func (s *S) longPollHint() string {
	return fmt.Sprintf("no answer within %s; the kit assumes a server long-poll timeout of %s: if the server's is longer, pass it as --long-poll-timeout (Config.LongPollTimeout), e.g. --long-poll-timeout 20s, or let the kit measure it with --long-poll-timeout auto",
		s.longPollBudget(), s.LongPollTimeout())
}

func offsetOpts(offset string) []Opt {
	if offset == "" {
		return nil
	}
	return []Opt{Q("offset", offset)}
}

// CatchUp reads from offset following Stream-Next-Offset until an up-to-date response,
// and returns the concatenated bodies and the final response. It fails the spec on a
// non-200 answer, a repeated offset without up-to-date, or after 1000 responses.
func (st *Stream) CatchUp(offset string) ([]byte, *Response) {
	ginkgo.GinkgoHelper()
	var all []byte
	for i := 0; i < 1000; i++ {
		r := st.Read(offset)
		Expect(r.StatusCode).To(Equal(200), "catch-up read at %q: %s", offset, r)
		all = append(all, r.Data...)
		next := r.Get(hNextOffset)
		Expect(next).NotTo(BeEmpty(), "catch-up response without %s", hNextOffset)
		if r.Get(hUpToDate) == "true" {
			return all, r
		}
		Expect(next).NotTo(Equal(offset), "a response without %s must advance the offset", hUpToDate)
		offset = next
	}
	ginkgo.Fail("catch-up did not reach up-to-date in 1000 responses")
	return nil, nil
}

// CatchUpJSON is CatchUp for JSON streams: it returns the messages of every response's
// array, in order.
func (st *Stream) CatchUpJSON(offset string) ([]json.RawMessage, *Response) {
	ginkgo.GinkgoHelper()
	var msgs []json.RawMessage
	for i := 0; i < 1000; i++ {
		r := st.Read(offset)
		Expect(r.StatusCode).To(Equal(200), "catch-up read at %q: %s", offset, r)
		msgs = append(msgs, MustJSONArray(r.Data)...)
		if r.Get(hUpToDate) == "true" {
			return msgs, r
		}
		Expect(r.Get(hNextOffset)).NotTo(Equal(offset))
		offset = r.Get(hNextOffset)
	}
	ginkgo.Fail("catch-up did not reach up-to-date in 1000 responses")
	return nil, nil
}

// MustJSONArray decodes a JSON array body into its elements, failing the spec otherwise.
func MustJSONArray(b []byte) []json.RawMessage {
	ginkgo.GinkgoHelper()
	var msgs []json.RawMessage
	Expect(json.Unmarshal(b, &msgs)).To(Succeed(), "body %q is not a JSON array", excerpt(b, 200))
	Expect(msgs).NotTo(BeNil(), "body %q is not a JSON array", excerpt(b, 200))
	return msgs
}

// sseBudget is how long a spec waits for SSE events that must come without waiting for
// new data (catch-up, the control after it, EOF, an append's data): the long-poll
// timeout plus slack. Keep-alives are never needed to pass a spec.
func (s *S) sseBudget() time.Duration { return s.LongPollTimeout() + 2*time.Second }
