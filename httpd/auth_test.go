package httpd

import (
	"strings"
	"testing"
)

func mustTokens(t *testing.T, text string) *Tokens {
	t.Helper()
	ts, err := ParseTokens(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// Token files: "TOKEN [scope ...]", comments, and errors that name the line.
func TestParseTokens(t *testing.T) {
	mustTokens(t, "# comment\n\nall\nr read:alpha1 read:*\nw write:alpha1\nadm admin\n")
	for _, bad := range []string{"", "# only a comment\n", "t read\n", "t read:UPPER\n", "t delete:alpha1\n", "t\nt admin\n", "t write:\n"} {
		if _, err := ParseTokens(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: accepted", bad)
		} else if bad != "" && !strings.Contains(bad, "comment") && !strings.Contains(err.Error(), "line ") {
			t.Errorf("%q: error %q names no line", bad, err)
		}
	}
}

// Each route needs its scope: reads read:BUCKET, writes write:BUCKET, bucket creation
// and deletion admin; a token without scopes grants everything; the flat surface is the
// compat bucket. No token is 401, a token without the scope 403 (JSON bodies), and a
// refused request changes nothing. Spec: B-12-01, D12.
func TestScopedTokens(t *testing.T) {
	s := newTestServerWith(t, Config{Tokens: mustTokens(t,
		"all\nr read:alpha1\nw write:alpha1\nstar read:* write:*\nadm admin\nflat read:default write:default\n")})
	auth := func(tok string) string { return "Authorization: Bearer " + tok }
	for _, c := range []struct {
		tok, method, path string
		want              int
	}{
		{"", "PUT", "/alpha1", 401},
		{"nope", "PUT", "/alpha1", 401},
		{"w", "PUT", "/alpha1", 403},
		{"star", "PUT", "/alpha1", 403},
		{"adm", "PUT", "/alpha1", 201},
		{"all", "PUT", "/beta22", 201},
		{"r", "PUT", "/alpha1/s", 403},
		{"w", "PUT", "/alpha1/s", 201},
		{"w", "POST", "/alpha1/s", 204},
		{"w", "GET", "/alpha1/s?offset=-1", 403},
		{"r", "GET", "/alpha1/s?offset=-1", 200},
		{"r", "HEAD", "/alpha1/s", 200},
		{"r", "GET", "/alpha1/streams", 200},
		{"r", "GET", "/beta22/streams", 403},
		{"w", "PUT", "/beta22/s", 403},
		{"star", "PUT", "/beta22/t", 201},
		{"r", "DELETE", "/alpha1/s", 403},
		{"w", "DELETE", "/beta22", 403},
		{"flat", "PUT", "/v1/stream/f", 201},
		{"flat", "GET", "/v1/stream/f?offset=-1", 200},
		{"r", "GET", "/v1/stream/f?offset=-1", 403},
		{"adm", "GET", "/v1/stream/f?offset=-1", 200},
		{"", "OPTIONS", "/alpha1/s", 204},
	} {
		hdr := []string{"Content-Type: text/plain"}
		if c.tok != "" {
			hdr = append(hdr, auth(c.tok))
		}
		body := ""
		if c.method == "POST" {
			body = "x"
		}
		w := s.do(c.method, c.path, body, hdr...)
		if status(w) != c.want {
			t.Errorf("%s %s with %q: %d %s, want %d", c.method, c.path, c.tok, status(w), w.Body, c.want)
			continue
		}
		if c.want == 403 && c.method != "HEAD" {
			if errorCode(t, w) != "FORBIDDEN" || !strings.Contains(w.Body.String(), "needs ") {
				t.Errorf("%s %s: 403 body %s", c.method, c.path, w.Body)
			}
		}
	}
	if w := s.do("GET", "/beta22/s?offset=-1", "", auth("all")); status(w) != 404 {
		t.Fatalf("a refused PUT created the stream: %d", status(w))
	}
}

// SetTokens swaps the set: removed tokens are refused at once, new ones admitted.
func TestSetTokens(t *testing.T) {
	s := newTestServerWith(t, Config{Tokens: mustTokens(t, "old\n")})
	if w := s.do("PUT", "/v1/stream/x", "", "Authorization: Bearer old"); status(w) != 201 {
		t.Fatalf("old token: %d", status(w))
	}
	s.h.SetTokens(mustTokens(t, "new read:default\n"))
	if w := s.do("GET", "/v1/stream/x?offset=-1", "", "Authorization: Bearer old"); status(w) != 401 {
		t.Fatalf("removed token: %d", status(w))
	}
	if w := s.do("GET", "/v1/stream/x?offset=-1", "", "Authorization: Bearer new"); status(w) != 200 {
		t.Fatalf("new token: %d", status(w))
	}
}
