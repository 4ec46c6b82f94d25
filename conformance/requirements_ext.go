package conformance

// extRequirements numbers extensions.txt (doc.go, "Requirement numbering"). Section 0 is
// the unnumbered "Extension Capability Advertisement". Requirements addressed to clients
// are listed too (they are gaps of a server kit; see gaps.go).
var extRequirements = []Requirement{
	// 0. Extension Capability Advertisement
	{"X-0-01", MUST, "Stream-Extensions advertises only tokens whose semantics apply to the target stream"},
	{"X-0-02", MUST, "An active implementation advertises its token on the responses its extension specification names"},
	{"X-0-03", MUST, "Clients ignore unrecognized extension tokens"},
	{"X-0-04", MUST, "Clients verify a token before relying on its extension"},

	// 1.1 Identifier Constraints
	{"X-1.1-01", MUST, "bucket_id matches ^[a-z0-9_-]{4,64}$"},
	{"X-1.1-02", MUST, "bucket_id is globally unique within the service"},
	{"X-1.1-03", MUST, "stream_id is any UTF-8 string within the limits"},
	{"X-1.1-04", MUST, "stream_id is at most 122 bytes"},
	{"X-1.1-05", MUST, "stream_id contains no /, NUL or .."},
	{"X-1.1-06", MUST, "The combined {bucket_id}/{stream_id} key is at most 122 bytes"},
	{"X-1.1-07", MUST, "The local stream id streams is reserved for the bucket listing"},
	// 1.2 Create Bucket
	{"X-1.2-01", MUST, "Buckets are created explicitly with PUT /{bucket_id}"},
	{"X-1.2-02", MUST, "PUT /{bucket_id}/{stream_id} never creates a bucket implicitly"},
	{"X-1.2-03", MUST, "PUT /{bucket_id} answers 201 created, 400 invalid id, 409 already exists"},
	// 1.3 Get Bucket Metadata
	{"X-1.3-01", MUST, "GET /{bucket_id} answers 200 with {bucket_id, streams (count)}, 400 invalid id, 404 missing"},
	// 1.4 List Bucket Streams
	{"X-1.4-01", MUST, "prefix filters bucket-local stream ids; omitted, all are eligible"},
	{"X-1.4-02", MUST, "after is an exclusive cursor over bucket-local stream ids"},
	{"X-1.4-03", MUST, "limit defaults to 1000 and must be in 1..=1000"},
	{"X-1.4-04", MUST, "The listing body has bucket_id, prefix, stream_count, streams[{stream_id,status,content_type,tail_offset,created_at_ms,last_write_at_ms}], next_cursor, has_more"},
	{"X-1.4-05", MUST, "streams is sorted lexicographically by stream_id"},
	{"X-1.4-06", MUST, "Listing answers 200, 400 (invalid bucket id or query parameters), 404 (missing bucket)"},
	// 1.5 Delete Bucket
	{"X-1.5-01", MUST, "A bucket must be empty before deletion"},
	{"X-1.5-02", MUST, "DELETE /{bucket_id} answers 204, 400 invalid id, 404 missing, 409 not empty"},
	// 1.6 Stream Operations
	{"X-1.6-01", MUST, "Every base stream operation applies under {base_url}/{bucket_id}/{stream_id}"},
	{"X-1.6-02", MUST, "Stream operations under a missing bucket answer 404"},

	// 2.1 Offset Conventions
	{"X-2.1-01", MUST, "Clients use server-returned Stream-Next-Offset values"},
	{"X-2.1-02", MUST, "One retained-message boundary model across ordinary reads, snapshot offsets and bootstrap"},
	// 2.2 Publish Snapshot
	{"X-2.2-01", MUST, "The snapshot Content-Type is stored and returned on later reads"},
	{"X-2.2-02", MUST, "The snapshot Content-Type defaults to application/octet-stream"},
	{"X-2.2-03", MUST, "A Stream-Snapshot-Match that does not match the visible snapshot answers 409"},
	{"X-2.2-04", MUST, "Publish answers 204, 400 (invalid or unaligned offset), 404, 409 (beyond tail), 410, 413"},
	{"X-2.2-05", MUST, "A successful publish returns Stream-Snapshot-Digest"},
	{"X-2.2-06", MUST, "Re-publishing the same content type and body at the same offset succeeds with the same digest"},
	{"X-2.2-07", MUST, "Publishing different content at an already-published offset answers 409"},
	{"X-2.2-08", MUST, "Publishing a snapshot never changes the earliest retained offset"},
	{"X-2.2-09", MUST, "A retention boundary that is unaligned, moves backward or is newer than the latest snapshot is rejected"},
	{"X-2.2-10", MUST, "After retention, offsets before retained_offset answer 410"},
	{"X-2.2-11", MUST, "Record-aware JSON streams also expose snapshot?record= and retention?record="},
	{"X-2.2-12", MUST, "A new snapshot replaces the visible one immediately"},
	{"X-2.2-13", MAY, "Superseded snapshots may be garbage-collected asynchronously"},
	{"X-2.2-14", MUST, "Clients do not depend on superseded snapshots staying readable"},
	{"X-2.2-15", MUST, "Snapshot creation never blocks concurrent appends"},
	{"X-2.2-16", MUST, "Updates at or beyond snapshot_offset are not folded into the snapshot"},
	// 2.3 Read Latest Snapshot
	{"X-2.3-01", MUST, "GET {stream}/snapshot answers 307 to {stream}/snapshot/{offset}, or 404 without a snapshot"},
	// 2.4 Snapshot Metadata on HEAD
	{"X-2.4-01", SHOULD, "HEAD includes Stream-Snapshot-Offset when a visible snapshot exists"},
	{"X-2.4-02", MUST, "HEAD snapshot headers are Stream-Snapshot-Offset and Stream-Snapshot-Digest"},
	{"X-2.4-03", MUST, "No Stream-Snapshot-Offset means no visible snapshot"},
	{"X-2.4-04", MUST, "Stream-Snapshot-Offset names the snapshot GET {stream}/snapshot resolves to"},
	// 2.5 Read Snapshot
	{"X-2.5-01", MUST, "A snapshot read carries Content-Type, Stream-Snapshot-Offset, -Digest, Stream-Next-Offset, Stream-Up-To-Date"},
	{"X-2.5-02", MUST, "A snapshot read answers 200, or 404 when missing or collected"},
	// 2.6 Delete Snapshot
	{"X-2.6-01", MUST, "Snapshot DELETE answers 404 (missing or superseded) or 409 (the latest visible one)"},
	{"X-2.6-02", MAY, "Single-snapshot implementations may make superseded snapshots unreachable at once (404)"},

	// 3.1 Bootstrap request
	{"X-3.1-01", MUST, "/bootstrap defines no query parameters"},
	{"X-3.1-02", SHOULD, "/bootstrap rejects any live query parameter with 400"},
	// 3.2 Response
	{"X-3.2-01", MUST, "Bootstrap headers: multipart/mixed with boundary, Stream-Snapshot-Offset (-1 without), Stream-Next-Offset, Stream-Up-To-Date"},
	{"X-3.2-02", MUST, "The body is RFC 2046 multipart/mixed; each part is one logical message"},
	{"X-3.2-03", MUST, "With a snapshot, the first part is its raw bytes with its stored Content-Type"},
	{"X-3.2-04", MUST, "Each update part is exactly one retained message with that update's Content-Type"},
	{"X-3.2-05", MUST, "Without a snapshot: an empty application/octet-stream first part and Stream-Snapshot-Offset -1"},
	{"X-3.2-06", MUST, "Update parts begin at the earliest retained offset (after the snapshot point)"},
	{"X-3.2-07", MUST, "Bootstrap is never wrapped in an outer binary framing container"},
	{"X-3.2-08", MUST, "Bootstrap keeps the ordinary read boundaries and never reframes binary payloads"},
	{"X-3.2-09", MUST, "Bootstrap answers 200, or 404 for a missing stream"},
	// 3.3 Follow-Up Live Reads
	{"X-3.3-01", MUST, "/bootstrap is one-shot and supports neither live=sse nor live=long-poll"},
	{"X-3.3-02", MUST, "Clients continue tailing from the returned Stream-Next-Offset"},
	{"X-3.3-03", SHOULD, "Clients prefer SSE and fall back to long-poll"},
	// 3.4 Compatibility
	{"X-3.4-01", MUST, "Ordinary GET reads never return snapshot bytes"},
	{"X-3.4-02", SHOULD, "Clients call /bootstrap after a 410"},
	{"X-3.4-03", MUST, "Once a stream answers 410, /bootstrap provides a snapshot covering the earliest retained offset"},
	{"X-3.4-04", MUST, "Clients parse /bootstrap as an ordered message sequence"},

	// 4 Append Batch
	{"X-4-01", MUST, "Clients do not assume append-batch exists on other servers"},
	{"X-4-02", MUST, "Frames are never concatenated into one stream record"},
	// 4.1 Request
	{"X-4.1-01", MUST, "Append-batch is POST /{bucket_id}/{stream_id}/append-batch"},
	{"X-4.1-02", MUST, "The request Content-Type applies to every frame and must match the stream's"},
	{"X-4.1-03", MUST, "The body is a sequence of uint32 big-endian length-prefixed frames"},
	{"X-4.1-04", MUST, "Zero-length frames are invalid"},
	{"X-4.1-05", MAY, "More than 512 frames or 32 MiB may answer 413"},
	// 4.2 Unsupported Per-Append Controls
	{"X-4.2-01", MUST, "Append-batch supports no Stream-Closed, Producer-*, Stream-Record-Match or Stream-Seq"},
	{"X-4.2-02", MUST, "Clients needing those controls use the standard POST"},
	// 4.3 Response
	{"X-4.3-01", MUST, "A valid batch answers 200 with a JSON array of acks in frame order"},
	{"X-4.3-02", MUST, "Acks carry status, stream_next_offset, stream_closed, error_code, error as applicable"},
	{"X-4.3-03", MAY, "Malformed framing, missing Content-Type, unsupported headers or oversize may fail the whole request 400/413"},
	{"X-4.3-04", MUST, "Frame-level failures are reported inside the array"},
	{"X-4.3-05", MUST, "Clients inspect every acknowledgement"},
	// 4.4 Ordering and Compatibility
	{"X-4.4-01", MUST, "Frames are submitted in request order and acks keep that order"},
	{"X-4.4-02", MUST, "Successful frames advance the same offsets a standard POST would"},
	{"X-4.4-03", MUST, "Batch-appended data reads back through every ordinary read path"},

	// 5 Stream Attributes
	{"X-5-01", MUST, "Attribute updates never change offsets, ETag, content type, closure, snapshots, bootstrap or reads"},
	// 5.1 Attribute Object
	{"X-5.1-01", MUST, "The attribute document is a JSON object with optional title (string) and metadata (object)"},
	{"X-5.1-02", SHOULD, "Applications store their own information inside metadata"},
	{"X-5.1-03", MUST, "Unknown top-level fields are accepted and not stored"},
	{"X-5.1-04", MUST, "Clients put additional fields inside metadata"},
	{"X-5.1-05", MUST, "The encoded attribute object is at most 16 KiB"},
	{"X-5.1-06", MUST, "Larger attribute documents answer 400"},
	{"X-5.1-07", MUST, "{} is equivalent to no attributes"},
	// 5.2 Create Stream With Attributes
	{"X-5.2-01", MAY, "Stream-Attrs may supply attributes on create"},
	{"X-5.2-02", MUST, "Re-create is idempotent only with matching attributes; a mismatch answers 409"},
	// 5.3 Read Attributes
	{"X-5.3-01", MUST, "GET {stream}/attrs answers 200 application/json with the object, or 404"},
	{"X-5.3-02", MUST, "Without attributes the body is {}"},
	// 5.4 Replace Attributes
	{"X-5.4-01", MUST, "PUT {stream}/attrs replaces the whole object (no merge)"},
	{"X-5.4-02", MUST, "PUT attrs answers 204, 400 (content type, invalid object, too large), 404"},
	{"X-5.4-03", MUST, "Submitting {} clears the attributes"},
	{"X-5.4-04", MAY, "Attributes may be updated after the stream is closed"},

	// 6 JSON Record Coordinates
	{"X-6-01", MUST, "json-record-coordinates-v1 is active only on application/json streams with the record model"},
	{"X-6-02", MUST, "HEAD and stream operation responses on such streams advertise the token in Stream-Extensions"},
	{"X-6-03", MUST, "The token is never advertised where the extension is inactive (e.g. non-JSON streams)"},
	{"X-6-04", MUST, "Record-aware clients verify the token and reject responses without it"},
	// 6.1 Record Model
	{"X-6.1-01", MUST, "Record ordinals are zero-based, consecutive in commit order, per stream"},
	{"X-6.1-02", MUST, "A new empty stream has F = N = 0"},
	{"X-6.1-03", MUST, "A visible ordinal is never reused or changed"},
	{"X-6.1-04", MUST, "Retention may advance F but never renumbers surviving records"},
	{"X-6.1-05", MUST, "Ordinals are independent from offsets, Stream-Seq and producer seqs"},
	{"X-6.1-06", MUST, "Clients may do arithmetic on ordinals but treat offsets as opaque"},
	{"X-6.1-07", MUST, "Records follow JSON normalization: a value is one record, an array one per element, [] none (and 400 on POST)"},
	{"X-6.1-08", MUST, "Message boundaries and ordinals survive storage, flush, compaction, snapshot, restart and retention"},
	{"X-6.1-09", MUST, "Coalescing storage never coalesces the record coordinate space"},
	// 6.2 Client Event Time
	{"X-6.2-01", MUST, "The extension assigns no server timestamp to records"},
	{"X-6.2-02", SHOULD, "Applications include their own event time in each value"},
	{"X-6.2-03", MUST, "Out-of-order client event times never change order, ordinals, bytes or offsets"},
	// 6.3 Create and Append Acknowledgements
	{"X-6.3-01", MUST, "Creating or appending JSON messages answers Stream-Record-Start and Stream-Record-Next"},
	{"X-6.3-02", MUST, "An operation creating no records answers Start = Next = the record tail"},
	{"X-6.3-03", MUST, "One request's messages commit atomically with one contiguous range, or none"},
	{"X-6.3-04", MUST, "Concurrent appenders receive disjoint ranges in commit order"},
	{"X-6.3-05", MUST, "A deduplicated producer retry returns the original record range"},
	// 6.4 Conditional Append by Record Tail
	{"X-6.4-01", MAY, "Writers may send Stream-Record-Match with the expected record tail"},
	{"X-6.4-02", MUST, "The append is accepted only when N equals Stream-Record-Match"},
	{"X-6.4-03", MUST, "A mismatch answers 412 with Stream-Record-Next and Stream-Next-Offset"},
	{"X-6.4-04", MUST, "Stream-Record-Match composes with Stream-Seq and producer headers"},
	// 6.5 Record Metadata on HEAD
	{"X-6.5-01", MUST, "HEAD of a record-aware stream includes Stream-Record-First and Stream-Record-Next"},
	// 6.6 Record-Aware Read Parameters
	{"X-6.6-01", MUST, "A record-aware read starts with record=<n>, record=now or tail_records=<count>"},
	{"X-6.6-02", MUST, "record, tail_records and offset are mutually exclusive"},
	{"X-6.6-03", MUST, "tail_records is a non-negative integer"},
	{"X-6.6-04", MUST, "record < F answers 410 with Stream-Record-First and Stream-Record-Next"},
	{"X-6.6-05", MUST, "record = N is a valid up-to-date empty read"},
	{"X-6.6-06", MUST, "record > N answers 400 with Stream-Record-Next"},
	{"X-6.6-07", MUST, "tail_records=0 equals record=now"},
	{"X-6.6-08", MAY, "max_records=<positive> limits the complete records returned"},
	{"X-6.6-09", MUST, "max_records without a record-aware start answers 400"},
	{"X-6.6-10", MUST, "max_bytes and max_records never appear together"},
	{"X-6.6-11", MUST, "A record-aware read with max_bytes answers 400"},
	// 6.7 Record-Aligned Read Responses
	{"X-6.7-01", MUST, "Record-aware reads return whole records as application/x-ndjson with Stream-Record-First/-Start/-Next and Stream-Next-Offset"},
	{"X-6.7-02", MUST, "Stream-Record-Start is the resolved start, Stream-Record-Next follows the last returned record"},
	{"X-6.7-03", MUST, "Stream-Next-Offset identifies the same boundary as Stream-Record-Next"},
	{"X-6.7-04", MUST, "An empty record-aware response sets Start and Next to the resolved start"},
	{"X-6.7-05", MAY, "Ordinary offset reads are unchanged and may end mid-record"},
	// 6.8 Optional Record Envelope View
	{"X-6.8-01", MAY, "Clients may request record_view=envelope"},
	{"X-6.8-02", MUST, "record_view=envelope needs a record-aware start parameter"},
	{"X-6.8-03", MUST, "The envelope view answers Content-Type application/vnd.durable-stream-records+ndjson"},
	{"X-6.8-04", MUST, "Each envelope line is a JSON object with record and value"},
	{"X-6.8-05", MUST, "The envelope view changes no canonical bytes, offsets, ordinals, ETags, snapshots, bootstrap or ordinary reads"},
	// 6.9 Live Reads and SSE
	{"X-6.9-01", MUST, "Record start parameters compose with live=long-poll and live=sse"},
	{"X-6.9-02", MUST, "Record-aware SSE control events add streamFirstRecord and streamNextRecord"},
	{"X-6.9-03", MAY, "Default-view SSE data events keep the JSON-mode representation and may hold several messages"},
	{"X-6.9-04", MUST, "Control-event record coordinates follow every message sent before the control event"},
	{"X-6.9-05", MUST, "Envelope SSE sends one envelope per data event and Stream-Data-Content-Type: application/vnd.durable-stream-record+json"},
	{"X-6.9-06", MAY, "Clients may reconnect with streamNextRecord or streamNextOffset"},
	// 6.10 Retention, Snapshots, and Bootstrap
	{"X-6.10-01", MUST, "Retention advances F only at a record boundary"},
	{"X-6.10-02", MUST, "A trimmed ordinal answers 410; survivors keep their ordinals"},
	{"X-6.10-03", MUST, "A snapshot-advanced earliest retained offset maps to a record boundary"},
	{"X-6.10-04", MUST, "A snapshot at an intra-record offset answers 400"},
	{"X-6.10-05", SHOULD, "Snapshot and bootstrap responses include Stream-Record-First and Stream-Record-Next"},
	{"X-6.10-06", MUST, "Bootstrap update parts hold one JSON message each"},
	{"X-6.10-07", MAY, "Ordinal index entries may be reclaimed only once no longer needed"},
	// 6.11 Append Batch Integration
	{"X-6.11-01", MUST, "Append-batch acks on record-aware streams include stream_record_start and stream_record_next"},
	{"X-6.11-02", MUST, "A failed frame assigns no ordinal; later frames continue from the committed tail"},
	// 6.12 Compatibility and Non-Goals
	{"X-6.12-01", MAY, "Base clients keep working and may ignore Stream-Record-* and Stream-Extensions"},
	// 6.13 Correctness Requirements
	{"X-6.13-01", MUST, "Record invariants: one ordinal per message, contiguous, never reused, dedup keeps ranges, offset and record reads agree, N-F = retained count"},
	{"X-6.13-02", SHOULD, "Conformance tests cover flattening, concurrency, retries, preconditions, partial reads, retention, snapshots, restart, reconnection"},

	// 7 Ordinary SSE Compatibility
	{"X-7-01", MUST, "Binary SSE data events are raw base64 text with stream-sse-data-encoding: base64"},
	{"X-7-02", MUST, "Extension endpoints never redefine the binary SSE data payload shape"},

	// 8 URL Encoding
	{"X-8-01", MAY, "snapshot_offset values may need URL encoding"},
	{"X-8-02", MUST, "Clients and servers URL-encode and -decode offsets in path segments"},
}
