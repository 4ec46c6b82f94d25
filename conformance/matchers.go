package conformance

import (
	"fmt"
	"net/http"
	"strings"

	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gcustom"
	"github.com/onsi/gomega/types"
)

// HaveStatus matches a *Response whose status is one of codes (Gomega's HaveHTTPStatus).
func HaveStatus(codes ...any) types.GomegaMatcher {
	return WithTransform(func(r *Response) *http.Response { return r.httpResponse() }, HaveHTTPStatus(codes...))
}

// HaveHeader matches a *Response whose header name has value (a string for equality, or
// a matcher), like Gomega's HaveHTTPHeaderWithValue.
func HaveHeader(name string, value any) types.GomegaMatcher {
	return WithTransform(func(r *Response) *http.Response { return r.httpResponse() }, HaveHTTPHeaderWithValue(name, value))
}

// HaveNoHeader matches a *Response without header name.
func HaveNoHeader(name string) types.GomegaMatcher {
	return gcustom.MakeMatcher(func(r *Response) (bool, error) {
		return len(r.Header.Values(name)) == 0, nil
	}).WithTemplate("Expected response to have no {{.Data}} header, got {{.Actual.Header.Values .Data}}", name)
}

// HaveMediaType matches a *Response whose Content-Type has media type mt (parameters
// ignored, case-insensitive).
func HaveMediaType(mt string) types.GomegaMatcher {
	return gcustom.MakeMatcher(func(r *Response) (bool, error) {
		return mediaType(r.Get(hContentType)) == strings.ToLower(mt), nil
	}).WithTemplate("Expected Content-Type with media type {{.Data}}, got {{printf \"%q\" (.Actual.Get \"Content-Type\")}}", mt)
}

// HaveBody matches a *Response whose body equals s exactly.
func HaveBody(s string) types.GomegaMatcher {
	return WithTransform(func(r *Response) string { return r.Text() }, Equal(s))
}

// HaveEmptyBody matches a *Response with a zero-length body.
func HaveEmptyBody() types.GomegaMatcher {
	return WithTransform(func(r *Response) []byte { return r.Data }, BeEmpty())
}

// BeTrueHeader matches a *Response whose header name is "true" (case-insensitive, §4.1).
func BeTrueHeader(name string) types.GomegaMatcher {
	return HaveHeader(name, MatchRegexp(`^(?i:true)$`))
}

// BeOffset matches a string usable as an offset in responses (§8): non-empty, neither
// sentinel, none of , & = ? /.
func BeOffset() types.GomegaMatcher {
	return gcustom.MakeMatcher(func(o string) (bool, error) {
		if o == "" || o == offsetStart || o == offsetNow {
			return false, fmt.Errorf("offset %q is empty or a sentinel", o)
		}
		if strings.ContainsAny(o, ",&=?/") {
			return false, fmt.Errorf("offset %q contains one of , & = ? /", o)
		}
		return true, nil
	}).WithTemplate("Expected {{.Actual}} to be a server-issued offset (§8)")
}

// SortAfter matches an offset string that sorts strictly after prev (§8).
func SortAfter(prev string) types.GomegaMatcher {
	return gcustom.MakeMatcher(func(o string) (bool, error) {
		return o > prev, nil
	}).WithTemplate("Expected offset {{printf \"%q\" .Actual}} to sort after {{printf \"%q\" .Data}}", prev)
}
