// Package conformance is a black-box conformance kit for Durable Streams servers: Ginkgo v2
// specs that talk HTTP to any server URL and check the base protocol (the requirements
// digest, IDs B-<§>-<nn>) and the extensions (IDs X-<§>-<nn>).
//
// The kit shares no code with any server. Header names, offset sentinels and the cursor
// rule are restated here from the specs, so the kit stays an independent reading of them.
//
// # Running it
//
// Three ways, one entry point (Run):
//
//	go run ./cmd/dsconform --base-url http://127.0.0.1:4437 --surface flat --mode full
//	go test ./conformance -args -base-url=http://127.0.0.1:4437
//	func TestMyServer(t *testing.T) { conformance.Run(t, conformance.Config{BaseURL: u}) }
//
// Only one Run (one RunSpecs) per process: Ginkgo keeps its spec tree in a global.
//
// # Surfaces
//
// flat: streams live at {base}{StreamPath}{name}, StreamPath defaulting to /v1/stream/.
// bucketed (extension §1): the kit creates a bucket PUT {base}/{bucket} with a random
// valid id (or uses Config.Bucket) and puts streams at {base}/{bucket}/{name}.
//
// # Labels
//
// Every spec carries a closed set of labels (see labels.go; an unknown label or
// requirement id stops the run while the spec tree is built):
//
//	sec:<section>   the spec file's section, e.g. sec:5.2 or sec:x1
//	req:must|should|may   the strongest keyword the spec checks ([MUST] etc. in its text)
//	B-5.2-07, X-1.2-03    one label per requirement id the spec checks
//	ext:<id>        the extension it needs: buckets, snapshot, bootstrap, append-batch,
//	                attrs, json-record-coordinates-v1, fork, subscriptions
//	profile:dsd     checks of choices a server may make differently (the dsd offset
//	                format of docs/DESIGN.md D2, the error body of D7, A-nn resolutions that the
//	                protocol leaves open). Excluded unless Config.Profiles names the profile.
//	smoke, slow     the smoke spec; specs that wait for seconds (TTL expiry)
//
// # Modes
//
//	smoke  label smoke: one create/append/read.
//	core   req:must && ext: isEmpty.
//	full   everything within the enabled extensions and profiles, SHOULD/MAY included.
//
// The mode filter is ANDed with `ext: isSubsetOf {enabled}`, `profile: isSubsetOf
// {profiles}` and the user's LabelFilter, so specs for absent extensions are reported as
// skipped, never failed. DetectExtensions runs the same probe on its own (cmd/dslincheck
// uses it).
//
// A failure must be a real deviation: where the specification leaves a choice open (an
// empty header value read as absent or as malformed, the precision of a reported time,
// how soon a freed stream disappears), the general spec accepts every reading and dsd's
// is checked under profile:dsd.
//
// # Results files
//
// CompactReport and WriteResults condense a run's report to each spec's state and
// failure, small enough to commit; LoadResults reads one back for WriteMatrix (the Caddy
// column of CONFORMANCE.md, which CI does not run).
//
// # Requirement numbering
//
// Base requirement ids are those of the digest (docs/spec/base-protocol.md). Extension ids
// X-<section>-<nn> number, in document order within the deepest numbered heading of
// extensions.txt ("0" for the unnumbered capability-advertisement section):
//
//  1. each sentence holding an RFC 2119 keyword in capitals (one id per sentence, even if
//     it holds several keywords);
//  2. each "Response Codes" or "Response Headers" list, as one MUST requirement;
//  3. each indicative sentence stating server behaviour the kit can observe ("is
//     reserved", "is sorted"), as MUST.
//
// A sentence that only repeats an earlier requirement of the same section gets no id. The
// table lives in requirements_ext.go and never renumbers: new readings get new numbers at
// the end of their section.
package conformance
