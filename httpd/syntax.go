package httpd

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/dsd-project/dsd/model"
)

// singleValued are the request headers that carry one value. Sent twice, they are
// ambiguous (RFC 9110 §5.3 reads two lines as one comma-joined value, which none of them
// allows), so the request is refused rather than served from the first line.
var singleValued = []string{
	"Content-Type", hTTL, hExpiresAt, hStreamSeq, hStreamClosed,
	hForkedFrom, hForkOffset, hForkSubOffset,
	hProducerID, hProducerEpoch, hProducerSeq,
	hRecordMatch, hAttrs, hSnapshotMatch, "Authorization",
} // canonical forms, as http.Header keys them (TestSingleValuedHeadersAreCanonical)

// checkRequestSyntax refuses what no route could serve faithfully: a query string that
// does not parse (bad percent-escapes, ';' separators: ErrBadQuery, where Go's parser
// would silently drop the pair) and a repeated single-valued header (ErrRepeatedHeader).
// Bad input gets a 4xx and changes nothing.
func checkRequestSyntax(r *http.Request) error {
	if r.URL.RawQuery != "" {
		if _, err := url.ParseQuery(r.URL.RawQuery); err != nil {
			return model.MalformedQuery(malformedParam(r.URL.RawQuery))
		}
	}
	for name, v := range r.Header { // the request's few headers, not a look-up per name
		if len(v) > 1 && slices.Contains(singleValued, name) {
			return model.ErrRepeatedHeader
		}
	}
	return nil
}

// malformedParam names the first parameter of a raw query that url.ParseQuery refuses:
// its decoded name when that decodes, else the name as sent.
func malformedParam(raw string) string {
	for pair := range strings.SplitSeq(raw, "&") {
		key, value, _ := strings.Cut(pair, "=")
		if k, _, semi := strings.Cut(key, ";"); semi {
			key, value = k, ";"
		}
		name, kerr := url.QueryUnescape(key)
		if kerr != nil {
			name = key
		}
		if _, verr := url.QueryUnescape(value); kerr != nil || verr != nil || strings.Contains(value, ";") {
			return name
		}
	}
	return raw
}
