// Package fuzz holds dsd's Go fuzz targets, one file per layer (STYLE.md "Fuzz corpus
// layout"):
//
//	FuzzOffsetRoundTrip        model.Offset format/parse round trip and order (D2, B-8-01)
//	FuzzOffsetSpecParse        sentinels never parse to an Offset (B-8-03, B-8-08)
//	FuzzJSONBatchFlatten       JSON flattening and canonical bytes vs encoding/json (B-9.1, D3)
//	FuzzProducerHeaders        Producer-Id/Epoch/Seq grammar (B-5.2.1-01/02, A-08)
//	FuzzTTLParse               Stream-TTL grammar (B-5.1-04, A-13)
//	FuzzExpiresAtParse         Stream-Expires-At as RFC 3339 (B-5.1-06, A-12)
//	FuzzStreamClosedHeader     Stream-Closed presence rule (B-4.1-01, A-30)
//	FuzzBatchFrames            append-batch framing: own encoder round trip, refusals (ext §4.1)
//	FuzzAttrsNormalize         attribute normaliser: idempotent, order-insensitive, ≤ 16 KiB (ext §5.1)
//	FuzzBootstrapMultipart     hostile payloads come back byte-exact from /bootstrap (ext §3.2, D5)
//	FuzzRecordRead             record-aware read parameters: model, engine and httpd agree (ext §6.6)
//	FuzzForkHeaders            fork headers: model, engine and httpd agree (B-4.2, A-22, A-23)
//	FuzzHeldTail               SSE hold-back of an incomplete UTF-8 tail: no byte lost, events whole (D9)
//	FuzzHTTPHandler            any request through httpd: never a 5xx, never a panic
//	FuzzModelVsEngine          command scripts on the model, the engine and httpd agree
//	FuzzLogRecord              boltstore's group-log record decoder: canonical round trip, refusals (D4)
//
// `go test ./fuzz` replays the inline seeds and the committed corpus under
// testdata/fuzz/FuzzX/ (see README.md for provenance); `make fuzz FUZZTIME=30s` fuzzes
// each target in turn.
package fuzz
