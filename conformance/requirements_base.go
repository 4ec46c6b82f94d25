package conformance

// baseRequirements lists every requirement of the base-protocol digest
// (docs/spec/base-protocol.md), in its order. Level is the strongest keyword of the entry;
// entries without a keyword (descriptive rules, upstream-suite pins) count as MUST,
// "informative" ones as MAY.
var baseRequirements = []Requirement{
	// §1 General (§3, §11)
	{"B-3-01", MAY, "Read and write paths may be independent; PUT creates, POST appends/closes, GET reads, DELETE deletes, HEAD returns metadata"},
	{"B-3-02", MUST, "Unknown query parameters are ignored; header names are case-insensitive"},
	{"B-11-01", MUST, "Extensions never break base semantics; base clients and operations keep working without them"},

	// §2 Stream model and closure (§4, §4.1)
	{"B-4-01", MUST, "A stream is append-only: acknowledged bytes persist, never change at an offset, stay ordered; content type fixed at creation"},
	{"B-4-02", MAY, "Retention may drop old data; reads before the retained range answer 410"},
	{"B-4-03", SHOULD, "Re-creating a deleted stream is discouraged, but PUT after DELETE answers 201 with no old data"},
	{"B-4-04", MUST, "Closure is durable, monotonic and idempotent, observable as EOF; data stays readable; a final append and the close may be atomic"},
	{"B-4.1-01", MUST, "Stream-Closed counts only when its value is true (case-insensitive); other values are treated as absent; responses send true"},

	// §3 Forking (§4.2)
	{"B-4.2-01", MUST, "Stream-Forked-From names a source path on the same server and makes the PUT a fork"},
	{"B-4.2-02", MUST, "Stream-Fork-Offset is the divergence point (default: the source tail); the fork inherits data strictly before it"},
	{"B-4.2-03", MUST, "Stream-Fork-Sub-Offset moves the divergence point n messages (JSON) or bytes past the anchor; 0 equals absent"},
	{"B-4.2-04", MUST, "A fork may omit Content-Type (inherited); a different Content-Type than the source's answers 409"},
	{"B-4.2-05", MUST, "Fork expiry follows the source/request TTL and Expires-At table; forks can outlive their source"},
	{"B-4.2-06", MUST, "Fork errors: source missing 404, offset beyond tail or malformed 400, bad sub-offset 400, type or config mismatch 409, soft-deleted source 409"},
	{"B-4.2-07", MUST, "A repeated fork PUT with matching config answers 200, a mismatch 409"},
	{"B-4.2-08", MAY, "Closed streams can be forked; the fork starts open"},
	{"B-4.2-09", MUST, "A fork inherits no idempotent-producer or Stream-Seq state"},
	{"B-4.2-10", MUST, "DELETE of a referenced stream soft-deletes it: GET/HEAD/POST/DELETE answer 410, PUT 409; fork reads still work"},
	{"B-4.2-11", MUST, "Deleting the last fork of a soft-deleted stream frees it; GC cascades up the chain (may be asynchronous)"},
	{"B-4.2-12", MUST, "The zero offset as fork offset inherits nothing; an offset beyond the tail answers 400"},
	{"B-4.2-13", MUST, "Sub-offset without Stream-Forked-From, >0 without Stream-Fork-Offset, malformed, or >0 on an empty source answers 400"},
	{"B-4.2-14", MUST, "The sub-offset limit is the end of the append unit starting at the anchor; equal to the length is accepted"},
	{"B-4.2-15", MUST, "The materialized sub-offset prefix is the fork's first append unit; an initial body goes after it"},
	{"B-4.2-16", MUST, "Re-PUT with the same sub-offset answers 200, a different one 409; absent and 0 are equivalent"},
	{"B-4.2-17", MUST, "Producer state used on the source does not make the same tuple a duplicate on the fork"},
	{"B-4.2-18", MUST, "No response carries the fork headers; source and fork appends are invisible to each other"},
	{"B-4.2-19", MUST, "A rejected fork leaks no source reference; chains of forks read and garbage-collect correctly"},
	{"B-4.2-20", MUST, "A fork without expiry headers reports the source TTL; requested TTLs are reported uncapped"},

	// §4 Create (§5.1)
	{"B-5.1-01", MUST, "PUT on an existing stream answers 200 when the config matches, else 409; otherwise it creates and answers 201"},
	{"B-5.1-02", MUST, "Closure is part of the create comparison (Stream-Closed vs the stream's state)"},
	{"B-5.1-03", MAY, "A missing Content-Type on PUT defaults to application/octet-stream"},
	{"B-5.1-04", MUST, "Stream-TTL is a non-negative decimal integer without leading zero, sign, point or exponent; anything else answers 400"},
	{"B-5.1-05", MUST, "Only requests reaching the origin restart a TTL; live reads restart it when processing starts"},
	{"B-5.1-06", MUST, "Stream-Expires-At is an RFC 3339 timestamp; an invalid one answers 400"},
	{"B-5.1-07", SHOULD, "Stream-TTL together with Stream-Expires-At answers 400"},
	{"B-5.1-08", MUST, "After expiry HEAD/GET/POST answer 404; GET and POST extend a TTL, HEAD does not; Expires-At is never extended"},
	{"B-5.1-09", MUST, "PUT with Stream-Closed: true creates the stream closed with its body as the complete content"},
	{"B-5.1-10", MUST, "Stream-Fork-Offset beyond the source tail answers 400; fork offset headers need Stream-Forked-From"},
	{"B-5.1-11", MUST, "The PUT body is the initial content; JSON bodies are flattened and [] creates an empty stream"},
	{"B-5.1-12", MUST, "Create answers 201, 200, 409 (config mismatch), 400 (invalid headers), 404 (fork source missing), 429"},
	{"B-5.1-13", MUST, "201/200 carry Content-Type (stored value), Stream-Next-Offset and Stream-Closed when closed; 201 should carry an absolute Location"},
	{"B-5.1-14", MUST, "Content-Type comparison on re-create is case-insensitive; the same TTL answers 200, a different TTL 409"},

	// §5 Append (§5.2)
	{"B-5.2-01", MUST, "POST appends the body to an existing stream, optionally closing it atomically; non-appendable streams answer 405/501"},
	{"B-5.2-02", MUST, "With a body, Content-Type must be media-type equal to the stream's: different 409, missing 400"},
	{"B-5.2-03", MUST, "An empty-body request is never rejected because of its Content-Type"},
	{"B-5.2-04", SHOULD, "Chunked HTTP/1.1 and streamed HTTP/2 bodies are accepted"},
	{"B-5.2-05", MUST, "Stream-Seq values compare as raw bytes and must strictly increase; a value <= the last answers 409"},
	{"B-5.2-06", MUST, "Stream-Closed: true closes after appending the body; an empty body without it answers 400"},
	{"B-5.2-07", MUST, "Close-only on a closed stream answers 204 + Stream-Closed; a body on a closed stream answers 409 + Stream-Closed"},
	{"B-5.2-08", MUST, "Append answers 204 (success), 400, 404, 405/501, 409, 410, 413, 429; producer appends 200"},
	{"B-5.2-09", MUST, "A successful append carries Stream-Next-Offset (the new tail) and Stream-Closed when the stream is closed"},
	{"B-5.2-10", MUST, "A 409 for a closed stream carries Stream-Closed: true and Stream-Next-Offset = the final offset"},
	{"B-5.2-11", SHOULD, "With several conflicts, report closed before content-type mismatch before Stream-Seq regression"},
	{"B-5.2-12", MUST, "A 10 MiB append answers 200/204 or 413"},
	{"B-12.4-01", MUST, "The content-type match is enforced on append (type confusion)"},
	{"B-12.6-01", MUST, "Stream-Seq regressions are rejected"},

	// §6 Idempotent producers (§5.2.1)
	{"B-5.2.1-01", MUST, "Producer-Id, -Epoch and -Seq come all together or not at all (else 400); an empty Producer-Id answers 400"},
	{"B-5.2.1-02", MUST, "Producer epoch and seq are integers 0..2^53-1, else 400"},
	{"B-5.2.1-03", MUST, "Producer validation table: new 200, stale epoch 403, epoch bump with seq != 0 400, duplicate 204, gap 409"},
	{"B-5.2.1-04", MUST, "Producer responses carry Producer-Epoch and the highest accepted Producer-Seq; 403 the current epoch; 409 expected/received seq"},
	{"B-5.2.1-05", MUST, "Producer dedup precedes Stream-Seq; duplicates change no data; producers are independent; invalid bodies answer 400 without state change"},
	{"B-5.2.1-06", MAY, "Informative restart and auto-claim flows: bump the epoch; a zombie gets 403 with the new epoch"},
	{"B-5.2.1-07", MUST, "Producer validation and append are serialized per (stream, producer), so reordering causes no false gaps"},
	{"B-5.2.1-08", MUST, "Close with a final producer append answers 200 + Stream-Closed; producer close-only answers 204 and takes part in sequencing"},
	{"B-5.2.1-09", MUST, "On a closed stream the closing tuple answers 204 + Stream-Closed (body ignored); any other producer append 409 + Stream-Closed"},

	// §7 Close (§5.3)
	{"B-5.3-01", MUST, "Close-only answers 204 (also when already closed) with the unchanged Stream-Next-Offset and Stream-Closed: true; 404 if missing"},

	// §8 Delete (§5.4)
	{"B-5.4-01", MUST, "DELETE answers 204 and removes the data (later reads 404); 404 if absent; 410 on a soft-deleted stream"},

	// §9 HEAD (§5.5)
	{"B-5.5-01", MUST, "HEAD answers 200, 404, 410 or 429, without a body"},
	{"B-5.5-02", MUST, "HEAD 200 carries Content-Type, Stream-Next-Offset, Stream-TTL, Stream-Expires-At if set, Stream-Closed only when closed"},
	{"B-5.5-03", SHOULD, "HEAD is uncacheable (Cache-Control no-store) and never restarts a TTL"},

	// §10 Catch-up read (§5.6)
	{"B-5.6-01", MUST, "offset is optional (default -1); the body holds data from the offset up to a chunk limit"},
	{"B-5.6-02", MUST, "Catch-up answers 200, 400 (malformed offset or parameters), 404, 410, 429"},
	{"B-5.6-03", MUST, "No data past the offset: 200, empty body, Stream-Next-Offset = the offset; closed adds Stream-Closed; -1 is never echoed"},
	{"B-5.6-04", MUST, "A catch-up 200 carries Cache-Control, ETag and Stream-Next-Offset"},
	{"B-5.6-05", MUST, "Stream-Up-To-Date: true when the response holds everything available; not on chunk-limited responses"},
	{"B-5.6-06", MUST, "Stream-Closed: true on the response reaching a closed stream's final offset, not on partial reads"},
	{"B-5.6-07", MUST, "Reads at a closed tail: 200, empty, Stream-Closed and Stream-Up-To-Date; GET keeps the stored content type; -1 equals no offset"},
	{"B-5.6-08", MUST, "Empty, repeated or malformed offsets (comma, space, slash, NUL, newline) answer 400"},
	{"B-5.6-09", MUST, "Following Stream-Next-Offset reads large data back byte-exact; an acknowledged append is visible to the next read"},

	// §11 Long-poll (§5.7)
	{"B-5.7-01", MUST, "Long-poll requires offset; missing answers 400"},
	{"B-5.7-02", MUST, "Data at the offset answers 200 at once; otherwise the server waits up to its timeout"},
	{"B-5.7-03", MUST, "Long-poll answers 200, 204 on timeout, 400, 404, 429 (410 soft-deleted)"},
	{"B-5.7-04", MUST, "A long-poll 200 carries the catch-up headers plus Stream-Cursor"},
	{"B-5.7-05", MUST, "A long-poll 204 carries Stream-Next-Offset, Stream-Up-To-Date, Stream-Cursor while open, Stream-Closed when closed"},
	{"B-5.7-06", MUST, "Long-poll at a closed stream's tail answers 204 + Stream-Closed + Stream-Up-To-Date at once"},
	{"B-5.7-07", MUST, "EOF is an empty catch-up 200 with Stream-Closed, a long-poll 204 with Stream-Closed, an SSE control with streamClosed"},
	{"B-5.7-08", MUST, "Fork long-polls answer inherited data at once and wake only on the fork's own appends"},
	{"B-5.7-09", MUST, "offset=now long-poll on an idle stream answers 204 with up-to-date and the tail, which then returns the next append"},
	{"B-5.7-10", MUST, "Stream-Cursor is decimal; echoing it yields a greater one; -1 long-poll on data answers 200 with up-to-date"},

	// §12 SSE (§5.8, §10.2)
	{"B-5.8-01", MUST, "SSE requires offset (else 400) and answers Content-Type: text/event-stream"},
	{"B-5.8-02", MUST, "text/* and application/json send UTF-8 text; other types base64 with stream-sse-data-encoding: base64"},
	{"B-5.8-03", MUST, "data: lines join with newline; base64 payloads are valid padded RFC 4648; control events are never encoded"},
	{"B-5.8-04", MAY, "JSON streams may batch messages into one data event as a JSON array"},
	{"B-5.8-05", MUST, "A control event follows every data event: streamNextOffset, streamCursor while open, upToDate when caught up, streamClosed at EOF"},
	{"B-5.8-06", MUST, "The final control event carries streamClosed: true and the connection closes; at a closed tail one such event is sent at once"},
	{"B-5.8-07", MUST, "Servers should close SSE connections about every 60 s; clients reconnect from the last streamNextOffset"},
	{"B-5.8-08", MUST, "Exact framing: 'event: data' / 'event: control', data: lines, one-line control JSON, a blank line after each event"},
	{"B-5.8-09", MUST, "Text payloads split on CRLF/CR/LF into data: lines; embedded event boundaries stay inside one data event"},
	{"B-5.8-10", MUST, "One append is one data event then one control; an up-to-date control follows catch-up; offsets increase; offset=now sends no history"},
	{"B-5.8-11", MUST, "streamCursor is decimal and grows past an echoed cursor; the closing control has no cursor; a live reader gets the final append before the close"},

	// §13 Subscriptions (§6, §7)
	{"B-6-01", MUST, "__ds is routed ahead of streams; paths in bodies are root-relative"},
	{"B-6-02", MUST, "Each subscription link holds path, link_type (glob|explicit) and acked_offset"},
	{"B-6-03", MUST, "PUT __ds/subscriptions/:id creates (201), re-confirms (200) or conflicts (409); pattern or streams is required"},
	{"B-6-04", MUST, "Responses expose no shared secrets; webhook URLs are validated (https in production, no local targets)"},
	{"B-6-05", MUST, "A pattern subscription links existing matches at their current tail and new matches before their first append"},
	{"B-6-06", MUST, "GET returns the subscription document; DELETE answers 204 and fences later callbacks"},
	{"B-6-07", MUST, "POST/DELETE of explicit subscription streams answer 204 and are idempotent"},
	{"B-6-08", MUST, "__ds/jwks.json publishes the Ed25519 signing keys with stable kids"},
	{"B-7-01", MUST, "Pending work triggers a wake with a unique wake_id and a monotonic generation"},
	{"B-7-02", MUST, "Webhook deliveries are signed (Webhook-Signature) and carry the wake snapshot"},
	{"B-7-03", MUST, "A done reply acks the snapshot's tails and releases the lease; newer events wake again"},
	{"B-7-04", MUST, "Callbacks with the bearer token ack; stale calls answer 409 FENCED; retries back off and survive restarts"},
	{"B-7-05", MUST, "Pull-wake: wake events, claim, ack (heartbeat or done) and release with leases; stale calls 409 FENCED"},
	{"B-7-06", MUST, "Callback/ack/release need a valid token and the current generation and wake_id; lease expiry re-wakes"},
	{"B-12.9-01", MUST, "Subscription tokens travel only in Authorization and are checked on every call"},
	{"B-6-09", MUST, "Suite pins for subscriptions: unsafe webhook URLs 400 WEBHOOK_URL_REJECTED, ed25519 kids with ds_, URLs under __ds"},

	// §14 Offsets (§8)
	{"B-8-01", MUST, "Offsets are opaque, lexicographically ordered within a stream, unique per position, and every new offset sorts after earlier ones"},
	{"B-8-02", MUST, "Offsets never contain , & = ? /; they should be URL-safe and under 256 characters"},
	{"B-8-03", MUST, "offset=-1 is the stream start, the same as no offset"},
	{"B-8-04", MUST, "offset=now catch-up answers 200 with no data ([] for JSON), the tail and up-to-date, no-store and no ETag"},
	{"B-8-05", MUST, "offset=now long-poll waits at once: data 200, timeout 204 with up-to-date and the tail"},
	{"B-8-06", MUST, "offset=now SSE sends no history; its first control carries the tail and upToDate"},
	{"B-8-07", MUST, "offset=now on a closed stream answers at once with Stream-Closed, up-to-date and the final tail in every mode"},
	{"B-8-08", MUST, "-1 and now are never issued as offsets; offset=now on a missing stream answers 404 in every mode"},
	{"B-8-09", MUST, "Sub-offsets never appear in responses; clients continue from Stream-Next-Offset"},
	{"B-8-10", MUST, "A fork shares its source's offset space; Stream-Fork-Offset must be a server-issued offset"},
	{"B-8-11", MUST, "Offsets of successive appends strictly increase; the HEAD tail changes after an append"},

	// §15 Content types and JSON mode (§9)
	{"B-9-01", MUST, "Any media type is accepted; non-JSON streams are byte-transparent (0x00-0xFF round-trip)"},
	{"B-9.1-01", MUST, "JSON mode is media-type equal application/json; each POST stores its messages as one unit"},
	{"B-9.1-02", MUST, "JSON bodies flatten one level of a top-level array; any other value is one message"},
	{"B-9.1-03", MUST, "POST [] answers 400, PUT [] creates an empty stream; invalid JSON answers 400"},
	{"B-9.1-04", MUST, "JSON reads answer Content-Type application/json and a JSON array of the messages in range ([] when none)"},
	{"B-9.1-05", MUST, "All JSON value types round-trip in order with nesting preserved"},

	// §16 Caching, ETag, 304, cursor (§10)
	{"B-10-01", SHOULD, "Catch-up and long-poll reads send Cache-Control: public, max-age=60, stale-while-revalidate=300 (or private)"},
	{"B-10-02", MUST, "Reading at a closed stream's next offset answers 200, empty, Stream-Closed; an open one 200, empty, up-to-date"},
	{"B-10-03", MUST, "Every GET (not offset=now) carries an ETag; a matching If-None-Match answers 304 without body; closing changes the ETag"},
	{"B-10-04", MUST, "The ETag is non-empty, an echoed one answers 304, a wrong one 200, and it changes after an append"},
	{"B-10-05", MUST, "Clients echo the last Stream-Cursor as cursor and should sort query parameters"},
	{"B-10-06", MUST, "Every live response carries a cursor; the default is the number of 20 s intervals since 2024-10-09T00:00:00Z"},
	{"B-10-07", MUST, "Cursors never go backwards: an echoed current-or-future cursor gets a strictly greater one"},
	{"B-10-08", SHOULD, "Long-poll 204s should not be cached by CDNs; SSE connections should close about every 60 s"},

	// §17 Security (§12)
	{"B-12-01", MUST, "Access control for create/append/delete, TLS in production, path sanitizing; rate limits should answer 429"},
	{"B-12.7-01", SHOULD, "Every response carries X-Content-Type-Options: nosniff"},
	{"B-12.7-02", SHOULD, "Responses carry Cross-Origin-Resource-Policy: cross-origin, same-site or same-origin"},
	{"B-12.7-03", SHOULD, "HEAD and sensitive responses carry Cache-Control: no-store"},

	// §18 Port and header registry (§13)
	{"B-13-01", SHOULD, "Standalone servers default to port 4437"},
	{"B-13-02", MUST, "Registered headers and query parameters (offset, live=long-poll|sse, cursor)"},
}
