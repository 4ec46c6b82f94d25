package conformance

import "strings"

// gapReasons explains requirements that deliberately have no spec. CONFORMANCE.md lists
// every requirement without a spec; those not explained here show as "no spec yet".
var gapReasons = map[string]string{
	"B-3-01":     "a MAY about server architecture; not observable",
	"B-5.2.1-07": "needs control over request arrival order; not observable black-box",
	"B-5.8-07":   "connection recycling after ~60 s; too slow for the kit",
	"B-10-05":    "client requirement",
	"B-10-08":    "CDN caching and 60 s SSE recycling; not observable in the kit's time budget",
	"B-12-01":    "access control and TLS in production are deployment concerns outside a black-box kit",
	"B-13-01":    "the default port is a deployment setting; the kit is given a URL",
	"B-13-02":    "the header and parameter registry itself; every spec speaks its names",

	// Extension requirements addressed to clients.
	"X-0-03":    "client requirement",
	"X-0-04":    "client requirement",
	"X-2.1-01":  "client requirement",
	"X-2.2-14":  "client requirement",
	"X-3.1-01":  "defines no parameters: nothing to observe beyond X-3.1-02 (live rejected) and X-3.3-01 (one-shot)",
	"X-3.3-02":  "client requirement",
	"X-3.3-03":  "client requirement",
	"X-3.4-02":  "client requirement",
	"X-3.4-04":  "client requirement",
	"X-4-01":    "client requirement",
	"X-4.2-02":  "client requirement",
	"X-4.3-05":  "client requirement",
	"X-5.1-02":  "client requirement",
	"X-5.1-04":  "client requirement",
	"X-6-04":    "client requirement",
	"X-6.1-06":  "client requirement",
	"X-6.2-02":  "client requirement",
	"X-6.9-06":  "client requirement",
	"X-6.13-02": "addressed to conformance kits, not servers",
	"X-6.1-08":  "flush, compaction and restart are storage internals, not observable black-box (snapshot and retention: X-6.1-04, X-6.10-02)",
	"X-6.1-09":  "storage internals; not observable black-box",
	"X-6.10-07": "storage internals; not observable black-box",
	"X-8-01":    "a MAY about offset values; nothing to check",
}

// gapPrefixes explain whole groups of requirements without specs.
var gapPrefixes = []struct{ prefix, reason string }{}

// GapReason explains why requirement id has no spec, or returns "" when no reason is
// recorded (an unexplained gap).
func GapReason(id string) string {
	if r, ok := gapReasons[id]; ok {
		return r
	}
	for _, g := range gapPrefixes {
		if strings.HasPrefix(id, g.prefix) {
			return g.reason
		}
	}
	return ""
}
