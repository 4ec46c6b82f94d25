package httpd

import (
	"net/http"
	"net/url"

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
			return model.ErrBadQuery
		}
	}
	for _, name := range singleValued {
		if len(r.Header[name]) > 1 {
			return model.ErrRepeatedHeader
		}
	}
	return nil
}
