package ops

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/model"
)

// consoleAdmin is an admin handler over a fresh engine with buckets bkt-a, bkt-b, bkt-c
// (bkt-b holds stream src and its fork f), the console endpoints mounted with access.
func consoleAdmin(t *testing.T, access ReadAccess) *Admin {
	t.Helper()
	e, err := engine.Open(t.TempDir(), engine.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	for _, id := range []string{"bkt-c", "bkt-a", "bkt-b"} {
		if _, err := e.CreateBucket(id); err != nil {
			t.Fatal(err)
		}
	}
	src := model.StreamKey{Bucket: "bkt-b", Stream: "src"}
	if _, err := e.Create(src, engine.CreateRequest{ContentType: "text/plain", MediaType: "text/plain", Body: []byte("abc")}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Create(model.StreamKey{Bucket: "bkt-b", Stream: "f"}, engine.CreateRequest{Fork: &engine.ForkRequest{Source: src, SourcePath: "/bkt-b/src"}}); err != nil {
		t.Fatal(err)
	}
	a := NewAdmin(nil, nil)
	a.HandleBuckets(access)
	a.HandleLineage(access)
	a.SetEngine(e)
	return a
}

func get(t *testing.T, h http.Handler, path string, v any) int {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
	if v != nil && w.Code == 200 {
		if err := json.Unmarshal(w.Body.Bytes(), v); err != nil {
			t.Fatalf("GET %s: %v: %s", path, err, w.Body)
		}
	}
	if w.Code >= 400 && w.Code < 500 {
		checkErrorBody(t, w)
	} else if w.Code != 200 && !strings.Contains(w.Body.String(), `"reason"`) {
		t.Errorf("GET %s: %d without a reason: %s", path, w.Code, w.Body)
	}
	return w.Code
}

var readAll ReadAccess = func(*http.Request) (func(string) bool, bool) { return func(string) bool { return true }, true }

// GET /buckets pages by id with stream counts; the cursor is the last id returned.
func TestBucketsPaged(t *testing.T) {
	a := consoleAdmin(t, readAll)
	var ids []string
	after := ""
	for range 5 {
		var p bucketPage
		if code := get(t, a, "/buckets?limit=2&after="+after, &p); code != 200 {
			t.Fatalf("status %d", code)
		}
		for _, b := range p.Buckets {
			ids = append(ids, b.BucketID)
			if want := map[string]int{"bkt-b": 2}[b.BucketID]; b.Streams != want {
				t.Errorf("%s: %d streams, want %d", b.BucketID, b.Streams, want)
			}
		}
		if !p.HasMore {
			break
		}
		after = *p.NextCursor
	}
	if got := strings.Join(ids, ","); got != "bkt-a,bkt-b,bkt-c" {
		t.Fatalf("listed %s", got)
	}
	for _, bad := range []string{"0", "1001", "x", "01"} {
		if code := get(t, a, "/buckets?limit="+bad, nil); code != 400 {
			t.Errorf("limit=%s: %d, want 400", bad, code)
		}
	}
}

// A token sees only the buckets it may read; no valid token is 401.
func TestBucketsFilteredByToken(t *testing.T) {
	a := consoleAdmin(t, func(r *http.Request) (func(string) bool, bool) {
		if r.Header.Get("Authorization") == "" {
			return nil, false
		}
		return func(b string) bool { return b == "bkt-c" }, true
	})
	if code := get(t, a, "/buckets", nil); code != 401 {
		t.Fatalf("no token: %d, want 401", code)
	}
	r := httptest.NewRequest("GET", "/buckets?limit=1", nil)
	r.Header.Set("Authorization", "Bearer x")
	w := httptest.NewRecorder()
	a.ServeHTTP(w, r)
	var p bucketPage
	if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil || len(p.Buckets) != 1 || p.Buckets[0].BucketID != "bkt-c" || p.HasMore {
		t.Fatalf("filtered listing: %v %s", err, w.Body)
	}
}

// GET /lineage names a fork's source and counts a source's forks; 404 for no stream.
func TestLineageEndpoint(t *testing.T) {
	a := consoleAdmin(t, readAll)
	var l lineageBody
	if code := get(t, a, "/lineage/bkt-b/f", &l); code != 200 || l.ForkedFrom == nil || *l.ForkedFrom != "/bkt-b/src" || l.ForkOffset == nil {
		t.Fatalf("fork: %d %+v", code, l)
	}
	l = lineageBody{}
	if code := get(t, a, "/lineage/bkt-b/src", &l); code != 200 || l.ForkedFrom != nil || l.Forks != 1 {
		t.Fatalf("source: %d %+v", code, l)
	}
	if code := get(t, a, "/lineage/bkt-b/none", nil); code != 404 {
		t.Fatalf("missing stream: %d", code)
	}
}
