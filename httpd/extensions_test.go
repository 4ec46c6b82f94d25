package httpd

import (
	"bytes"
	"encoding/binary"
	"io"
	"mime"
	"mime/multipart"
	"net/url"
	"strings"
	"testing"
)

func frames(payloads ...string) string {
	var b bytes.Buffer
	for _, p := range payloads {
		binary.Write(&b, binary.BigEndian, uint32(len(p)))
		b.WriteString(p)
	}
	return b.String()
}

// Whole-request failures of append-batch commit nothing. Spec: extension §4.1-§4.3, D5.
func TestAppendBatchRequestErrors(t *testing.T) {
	s := newTestServer(t)
	s.do("PUT", "/v1/stream/b", "", "Content-Type: text/plain")
	cases := []struct {
		name, body string
		hdr        []string
		status     int
		code       string
	}{
		{"no content type", frames("a"), nil, 400, "MISSING_CONTENT_TYPE"},
		{"producer header", frames("a"), []string{"Content-Type: text/plain", "Producer-Id: p"}, 400, "INVALID_BATCH"},
		{"stream-seq", frames("a"), []string{"Content-Type: text/plain", "Stream-Seq: 1"}, 400, "INVALID_BATCH"},
		{"stream-closed", frames("a"), []string{"Content-Type: text/plain", "Stream-Closed: true"}, 400, "INVALID_BATCH"},
		{"record match", frames("a"), []string{"Content-Type: text/plain", "Stream-Record-Match: 0"}, 400, "INVALID_BATCH"},
		{"truncated frame", frames("abc")[:5], []string{"Content-Type: text/plain"}, 400, "INVALID_BATCH"},
		{"truncated header", frames("a") + "\x00\x00", []string{"Content-Type: text/plain"}, 400, "INVALID_BATCH"},
		{"zero-length frame", frames("a", ""), []string{"Content-Type: text/plain"}, 400, "INVALID_BATCH"},
		{"too many frames", frames(strings.Split(strings.Repeat("x", 513), "")...), []string{"Content-Type: text/plain"}, 413, "PAYLOAD_TOO_LARGE"},
	}
	for _, c := range cases {
		w := s.do("POST", "/default/b/append-batch", c.body, c.hdr...)
		if status(w) != c.status || errorCode(t, w) != c.code {
			t.Errorf("%s: %d %s", c.name, status(w), w.Body.String())
		}
	}
	if w := s.do("GET", "/v1/stream/b", ""); w.Body.Len() != 0 {
		t.Fatalf("rejected batches appended %q", w.Body.String())
	}
	w := s.do("POST", "/default/b/append-batch", frames(strings.Split(strings.Repeat("x", 512), "")...), "Content-Type: text/plain")
	if status(w) != 200 || !strings.Contains(w.Body.String(), `"stream_next_offset":"0000000000000000_0000000000000512"`) {
		t.Fatalf("512 frames: %d %s", status(w), w.Body.String())
	}
}

// Bootstrap parts round-trip hostile payloads byte for byte, one message per part, and the
// boundary occurs in none. Spec: extension §3.2, D5.
func TestBootstrapMultipartRoundTrip(t *testing.T) {
	s := newTestServer(t)
	payloads := []string{"\r\n--\r\n", "--dsd-bootstrap-", "\x00\xff binary", "\r\n\r\nContent-Type: text/html\r\n\r\n<x>", strings.Repeat("y", 70000)}
	s.do("PUT", "/v1/stream/mp", "", "Content-Type: application/octet-stream")
	for _, p := range payloads {
		if w := s.do("POST", "/v1/stream/mp", p, "Content-Type: application/octet-stream"); status(w) != 204 {
			t.Fatal(w.Body.String())
		}
	}
	w := s.do("GET", "/default/mp/bootstrap", "")
	if status(w) != 200 || w.Header().Get("Stream-Snapshot-Offset") != "-1" || w.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("%d %v", status(w), w.Header())
	}
	mt, params, err := mime.ParseMediaType(w.Header().Get("Content-Type"))
	if err != nil || mt != "multipart/mixed" {
		t.Fatal(mt, err)
	}
	mr := multipart.NewReader(w.Body, params["boundary"])
	var parts []string
	var types []string
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(p)
		parts = append(parts, string(b))
		types = append(types, p.Header.Get("Content-Type"))
	}
	if len(parts) != len(payloads)+1 || parts[0] != "" || types[0] != "application/octet-stream" {
		t.Fatalf("%d parts, first %q %q", len(parts), parts[0], types[0])
	}
	for i, p := range payloads {
		if parts[i+1] != p {
			t.Fatalf("part %d: %q, want %q", i+1, parts[i+1], p)
		}
	}
	if w := s.do("GET", "/default/mp/bootstrap?live=sse", ""); status(w) != 400 {
		t.Fatalf("bootstrap with live: %d", status(w))
	}
}

// Snapshot offsets travel URL-encoded in paths; GET snapshot redirects to the visible one.
// Spec: extension §2.3, §2.5, §8.
func TestSnapshotPaths(t *testing.T) {
	s := newTestServer(t)
	w := s.do("PUT", "/v1/stream/sn", "abc", "Content-Type: text/plain")
	tail := w.Header().Get("Stream-Next-Offset")
	enc := url.PathEscape(tail)
	if w := s.do("PUT", "/default/sn/snapshot/"+strings.ReplaceAll(enc, "_", "%5F"), "S", "Content-Type: text/x-state"); status(w) != 204 || !strings.HasPrefix(w.Header().Get("Stream-Snapshot-Digest"), "sha256:") {
		t.Fatalf("publish: %d %s", status(w), w.Body.String())
	}
	w = s.do("GET", "/default/sn/snapshot", "")
	if status(w) != 307 || !strings.HasSuffix(w.Header().Get("Location"), "/default/sn/snapshot/"+enc) {
		t.Fatalf("latest: %d %s", status(w), w.Header().Get("Location"))
	}
	w = s.do("GET", "/default/sn/snapshot/"+enc, "")
	if status(w) != 200 || w.Body.String() != "S" || w.Header().Get("Content-Type") != "text/x-state" || w.Header().Get("Stream-Next-Offset") != tail {
		t.Fatalf("read: %d %q %v", status(w), w.Body.String(), w.Header())
	}
	if w := s.do("GET", "/default/sn/snapshot/0000000000000000_0000000000000000", ""); status(w) != 404 {
		t.Fatalf("other offset: %d", status(w))
	}
	if w := s.do("HEAD", "/v1/stream/sn", ""); w.Header().Get("Stream-Snapshot-Offset") != tail {
		t.Fatalf("HEAD: %v", w.Header())
	}
}

// Record parameters: exclusive with offset and each other; max_records needs a start;
// max_bytes is refused; only on JSON streams. Spec: extension §6.6, §6.8.
func TestRecordParameterRules(t *testing.T) {
	s := newTestServer(t)
	s.do("PUT", "/v1/stream/rj", "[1,2,3]", "Content-Type: application/json")
	s.do("PUT", "/v1/stream/rt", "x", "Content-Type: text/plain")
	for _, q := range []string{"record=1&offset=-1", "record=1&tail_records=1", "max_records=1",
		"record=1&max_bytes=10", "record=-1", "record=01", "tail_records=x", "record=0&max_records=0",
		"record_view=envelope", "record=0&record_view=other"} {
		if w := s.do("GET", "/v1/stream/rj?"+q, ""); status(w) != 400 || errorCode(t, w) != "INVALID_RECORD_PARAMS" {
			t.Errorf("%s: %d %s", q, status(w), w.Body.String())
		}
	}
	if w := s.do("GET", "/v1/stream/rt?record=0", ""); status(w) != 400 {
		t.Errorf("record read on a text stream: %d", status(w))
	}
	w := s.do("GET", "/v1/stream/rj?record=4", "")
	if status(w) != 400 || w.Header().Get("Stream-Record-Next") != "3" {
		t.Errorf("record>N: %d %v", status(w), w.Header())
	}
	w = s.do("GET", "/v1/stream/rj?record=1&max_records=1&record_view=envelope", "")
	if status(w) != 200 || w.Body.String() != "{\"record\":1,\"value\":2}\n" ||
		w.Header().Get("Content-Type") != "application/vnd.durable-stream-records+ndjson" ||
		w.Header().Get("Stream-Record-Start") != "1" || w.Header().Get("Stream-Record-Next") != "2" {
		t.Errorf("envelope: %d %q %v", status(w), w.Body.String(), w.Header())
	}
	if w := s.do("HEAD", "/v1/stream/rt", ""); w.Header().Get("Stream-Extensions") != "" {
		t.Errorf("token advertised on a text stream")
	}
}

// A snapshot or retention boundary is named once; backward retention is 409 in both
// forms; nothing changes on a refusal. Spec: extension §2.2, §6.6, §6.10, D7.
func TestSnapshotAndRetentionPositions(t *testing.T) {
	s := newTestServer(t)
	s.do("PUT", "/v1/stream/j", "[10,11,12,13]", "Content-Type: application/json")
	for _, path := range []string{
		"/default/j/snapshot?record=1&record=3",
		"/default/j/snapshot/0000000000000000_0000000000000006?record=1",
		"/default/j/retention?record=1&record=2",
		"/default/j/retention/0000000000000000_0000000000000003?record=1",
	} {
		if w := s.do("PUT", path, "S"); status(w) != 400 || errorCode(t, w) != "INVALID_RECORD_PARAMS" {
			t.Errorf("PUT %s: %d %s, want 400 INVALID_RECORD_PARAMS", path, status(w), w.Body.String())
		}
	}
	if w := s.do("GET", "/default/j/snapshot", ""); status(w) != 404 {
		t.Fatalf("a refused publish left a snapshot: %d", status(w))
	}
	if w := s.do("PUT", "/default/j/snapshot?record=3", "S"); status(w) != 204 {
		t.Fatalf("snapshot at record 3: %d %s", status(w), w.Body.String())
	}
	if w := s.do("PUT", "/default/j/retention?record=2", ""); status(w) != 204 {
		t.Fatalf("retention at record 2: %d %s", status(w), w.Body.String())
	}
	if w := s.do("PUT", "/default/j/retention?record=1", ""); status(w) != 409 || errorCode(t, w) != "RETENTION_CONFLICT" {
		t.Fatalf("retention back to record 1: %d %s, want 409 RETENTION_CONFLICT", status(w), w.Body.String())
	}
	if w := s.do("GET", "/v1/stream/j?record=2", ""); status(w) != 200 {
		t.Fatalf("record 2 after the refused move: %d", status(w))
	}
}

// A tail_records read whose answer retention changed gets a new ETag, so an old ETag
// earns no stale 304. Spec: B-10-03, extension §2.2, §6.6.
func TestTailRecordsETagFollowsRetention(t *testing.T) {
	s := newTestServer(t)
	s.do("PUT", "/v1/stream/j", "[1,2,3,4]", "Content-Type: application/json")
	before := s.do("GET", "/v1/stream/j?tail_records=3", "")
	etag := before.Header().Get("ETag")
	if status(before) != 200 || etag == "" || before.Header().Get("Stream-Record-Start") != "1" {
		t.Fatalf("tail_records=3: %d ETag %q start %q", status(before), etag, before.Header().Get("Stream-Record-Start"))
	}
	s.do("PUT", "/default/j/snapshot?record=2", "S")
	if w := s.do("PUT", "/default/j/retention?record=2", ""); status(w) != 204 {
		t.Fatalf("retention: %d %s", status(w), w.Body.String())
	}
	after := s.do("GET", "/v1/stream/j?tail_records=3", "", "If-None-Match: "+etag)
	if status(after) != 200 || after.Header().Get("ETag") == etag || after.Header().Get("Stream-Record-Start") != "2" {
		t.Fatalf("after retention: %d ETag %q (before %q), start %q; want 200, a new ETag, start 2",
			status(after), after.Header().Get("ETag"), etag, after.Header().Get("Stream-Record-Start"))
	}
	if again := s.do("GET", "/v1/stream/j?tail_records=3", "", "If-None-Match: "+after.Header().Get("ETag")); status(again) != 304 {
		t.Fatalf("unchanged tail_records read with its ETag: %d, want 304", status(again))
	}
}

// Every response that targets a JSON stream says Stream-Extensions: the stream's own
// operations, its sub-resources (the 307 of /snapshot included), refusals and DELETE;
// a text stream's never do. Spec: D5 amendment, extension §6.
func TestStreamExtensionsOnEveryJSONStreamResponse(t *testing.T) {
	s := newTestServer(t)
	s.do("PUT", "/default/j", `[{"a":1},{"b":2}]`, "Content-Type: application/json")
	s.do("PUT", "/default/t", "x", "Content-Type: text/plain")
	const o1 = "0000000000000000_0000000000000008"
	for _, name := range []string{"j", "t"} {
		p := "/default/" + name
		ct := "Content-Type: application/json"
		if name == "t" {
			ct = "Content-Type: text/plain"
		}
		reqs := []struct{ method, path, body string }{
			{"HEAD", p, ""}, {"GET", p + "?offset=-1", ""}, {"POST", p, `{"c":3}`},
			{"PUT", p + "/snapshot/" + o1, `{}`}, {"GET", p + "/snapshot", ""},
			{"GET", p + "/snapshot/" + o1, ""}, {"DELETE", p + "/snapshot/" + o1, ""},
			{"GET", p + "/bootstrap", ""}, {"GET", p + "/attrs", ""}, {"PUT", p + "/attrs", "{}"},
			{"POST", p + "/append-batch", frames(`{"d":4}`)}, {"PUT", p + "/retention/" + o1, ""},
			{"GET", p + "?offset=9999999999999999_9999999999999999", ""}, {"DELETE", p, ""},
		}
		for _, q := range reqs {
			hdr := []string{ct}
			if strings.HasSuffix(q.path, "/attrs") {
				hdr = []string{"Content-Type: application/json"}
			}
			w := s.do(q.method, q.path, q.body, hdr...)
			got := w.Header().Get("Stream-Extensions")
			if want := name == "j"; (got == "json-record-coordinates-v1") != want || (!want && got != "") {
				t.Errorf("%s %s: %d Stream-Extensions %q (JSON stream: %v)", q.method, q.path, status(w), got, want)
			}
		}
	}
}

// Every response that carries an ETag answers a matching If-None-Match with 304: catch-up
// reads, HEAD and snapshot reads (whose ETag is the digest). Spec: B-10-03, issue 18.
func TestEveryETagHonoursIfNoneMatch(t *testing.T) {
	s := newTestServer(t)
	s.do("PUT", "/default/e", "ab", "Content-Type: text/plain")
	s.do("PUT", "/default/e/snapshot/0000000000000000_0000000000000002", "S")
	for _, q := range []struct{ method, path string }{
		{"GET", "/default/e?offset=-1"}, {"HEAD", "/default/e"},
		{"GET", "/default/e/snapshot/0000000000000000_0000000000000002"},
	} {
		first := s.do(q.method, q.path, "")
		etag := first.Header().Get("ETag")
		if status(first) != 200 || etag == "" {
			t.Fatalf("%s %s: %d ETag %q", q.method, q.path, status(first), etag)
		}
		if w := s.do(q.method, q.path, "", "If-None-Match: "+etag); status(w) != 304 || w.Body.Len() != 0 || w.Header().Get("ETag") != etag {
			t.Errorf("%s %s with its ETag: %d %q ETag %q, want 304", q.method, q.path, status(w), w.Body.String(), w.Header().Get("ETag"))
		}
		if w := s.do(q.method, q.path, "", `If-None-Match: "other"`); status(w) != 200 {
			t.Errorf("%s %s with another ETag: %d", q.method, q.path, status(w))
		}
	}
}
