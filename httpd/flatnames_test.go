package httpd

import (
	"strings"
	"testing"
)

// On /v1/stream/ the whole path is the stream name (D1 amended): slash names are created,
// read, forked and listed; a sub-resource word is just a segment of a name there, while
// the bucketed surface keeps the sub-resources of a flat name without '/'.
func TestFlatSlashNames(t *testing.T) {
	s := newTestServer(t)
	w := s.do("PUT", "/v1/stream/events/a%20b/c", "x", "Content-Type: text/plain")
	if status(w) != 201 || !strings.HasSuffix(w.Header().Get("Location"), "/v1/stream/events/a%20b/c") {
		t.Fatalf("create: %d %q", status(w), w.Header().Get("Location"))
	}
	if w := s.do("POST", "/v1/stream/events/a%20b/c", "y", "Content-Type: text/plain"); status(w) != 204 {
		t.Fatalf("append: %d %s", status(w), w.Body)
	}
	if w := s.do("GET", "/v1/stream/events/a%20b/c?offset=-1", ""); status(w) != 200 || w.Body.String() != "xy" {
		t.Fatalf("read: %d %q", status(w), w.Body)
	}
	if w := s.do("GET", "/v1/stream/events/a%20b", ""); status(w) != 404 {
		t.Fatalf("a prefix of a name is another stream: %d", status(w))
	}
	w = s.do("PUT", "/v1/stream/forks/f", "", "Content-Type: text/plain",
		"Stream-Forked-From: /v1/stream/events/a%20b/c")
	if status(w) != 201 {
		t.Fatalf("fork: %d %s", status(w), w.Body)
	}
	if w := s.do("GET", "/v1/stream/forks/f?offset=-1", ""); w.Body.String() != "xy" {
		t.Fatalf("fork read %q", w.Body)
	}
	w = s.do("GET", "/default/streams?prefix=events/", "")
	if status(w) != 200 || !strings.Contains(w.Body.String(), `"stream_id":"events/a b/c"`) {
		t.Fatalf("listing: %d %s", status(w), w.Body)
	}
	// A sub-resource word is a name segment on the flat surface.
	if w := s.do("PUT", "/v1/stream/s/snapshot", "", "Content-Type: text/plain"); status(w) != 201 {
		t.Fatalf("s/snapshot is a stream: %d %s", status(w), w.Body)
	}
	s.do("PUT", "/v1/stream/s", "abc", "Content-Type: text/plain")
	if w := s.do("GET", "/default/s/attrs", ""); status(w) != 200 {
		t.Fatalf("bucketed sub-resource of a flat stream: %d %s", status(w), w.Body)
	}
	if w := s.do("GET", "/v1/stream/s/attrs", ""); status(w) != 404 {
		t.Fatalf("no sub-resources on the flat surface: %d", status(w))
	}
}
