package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// getBody GETs url with an optional bearer token and returns the status and body.
func getBody(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// The admin listener of a running dsd serves the console, GET /buckets, GET /lineage and
// the public protocol read-only under /console/api/, with the tokens of --auth-tokens.
func TestConsoleRoutes(t *testing.T) {
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte("root\nreader read:shop\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startDSD(t, t.TempDir(), "--auth-tokens", tokens, "--unsafe-no-sync", "--log-requests=false")
	pub, admin := p.url, p.adminURL(t)
	for _, b := range []string{"shop", "other"} {
		send(t, "PUT", pub+"/"+b, "", "", 201, "Authorization", "Bearer root")
	}
	send(t, "PUT", pub+"/shop/src", "text/plain", "abc", 201, "Authorization", "Bearer root")
	send(t, "PUT", pub+"/shop/fork", "", "", 201, "Authorization", "Bearer root", "Stream-Forked-From", "/shop/src")

	if code, body := getBody(t, admin+"/console/", ""); code != 200 || !strings.Contains(body, "dsd console") {
		t.Fatalf("console page: %d", code)
	}
	if code, _ := getBody(t, admin+"/buckets", ""); code != 401 {
		t.Fatalf("buckets without a token: %d", code)
	}
	var page struct {
		Buckets []struct {
			BucketID string `json:"bucket_id"`
			Streams  int
		}
	}
	code, body := getBody(t, admin+"/buckets", "reader")
	if err := json.Unmarshal([]byte(body), &page); code != 200 || err != nil || len(page.Buckets) != 1 || page.Buckets[0].BucketID != "shop" || page.Buckets[0].Streams != 2 {
		t.Fatalf("reader's buckets: %d %s", code, body)
	}
	if code, body := getBody(t, admin+"/lineage/shop/fork", "reader"); code != 200 || !strings.Contains(body, `"forked_from":"/shop/src"`) {
		t.Fatalf("lineage: %d %s", code, body)
	}
	if code, _ := getBody(t, admin+"/lineage/other/x", "reader"); code != 403 {
		t.Fatalf("lineage outside the token's scopes: %d", code)
	}
	if code, body := getBody(t, admin+"/console/api/shop/src?offset=-1", "reader"); code != 200 || body != "abc" {
		t.Fatalf("read through the console's API mount: %d %q", code, body)
	}
	if code, _ := getBody(t, admin+"/console/api/other/streams", "reader"); code != 403 {
		t.Fatalf("API mount ignores scopes: %d", code)
	}
	send(t, "POST", admin+"/console/api/shop/src", "text/plain", "x", 405, "Authorization", "Bearer root")
}
