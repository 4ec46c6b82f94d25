package main

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// manyFake is a bucketed server fake: it counts creations and appends per stream and
// records the listing cursors asked for.
type manyFake struct {
	mu      sync.Mutex
	created map[string]int
	appends map[string]int
	afters  map[string]int
}

func (f *manyFake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case len(parts) == 1 && r.Method == http.MethodPut:
		w.WriteHeader(201)
	case len(parts) == 2 && parts[1] == "streams" && r.Method == http.MethodGet:
		if r.URL.Query().Get("limit") != "7" {
			w.WriteHeader(400)
			return
		}
		f.afters[r.URL.Query().Get("after")]++
		w.Write([]byte(`{"streams":[]}`))
	case len(parts) == 2 && r.Method == http.MethodPut:
		f.created[parts[1]]++
		w.Header().Set("Stream-Next-Offset", "0")
		w.WriteHeader(201)
	case len(parts) == 2 && r.Method == http.MethodPost && f.created[parts[1]] == 1:
		f.appends[parts[1]]++
		w.WriteHeader(204)
	default:
		w.WriteHeader(404)
	}
}

func TestListingCursorsFirstMiddleLastFullPage(t *testing.T) {
	tg := &Target{Common: Common{Prefix: "p"}}
	// Sorted: p-0 p-1 p-10 p-11 p-2 ... p-9 (12 names).
	got := listingCursors(tg, 12, 3)
	if got != [3]string{"", "p-4", "p-6"} {
		t.Fatalf("cursors %q", got)
	}
	if got := listingCursors(tg, 2, 5); got != [3]string{"", "p-0", "p-0"} {
		t.Fatalf("fewer streams than a page: %q", got)
	}
}

func TestManyCreatesAppendsOnceAndListsAtEachCursor(t *testing.T) {
	f := &manyFake{created: map[string]int{}, appends: map[string]int{}, afters: map[string]int{}}
	tg := testTarget(t, f, 4)
	tg.Bucket = "b"
	c := manyConfig{Streams: 140, Setup: true, Conns: 4, Spread: 130, loopWindow: loopWindow{Duration: 100 * time.Millisecond},
		PageLimit: 7, PageReps: 3}
	r := NewResult("many", nil)
	ctx := context.Background()
	if err := manySetup(ctx, tg, c, r); err != nil {
		t.Fatal(err)
	}
	if len(f.created) != 140 || len(f.appends) != 140 {
		t.Fatalf("created %d, appended to %d streams; want 140 each", len(f.created), len(f.appends))
	}
	for name, n := range f.appends {
		if n != 1 || f.created[name] != 1 {
			t.Fatalf("%s: created %d times, appended %d times", name, f.created[name], n)
		}
	}
	if err := manySpread(ctx, tg, c, r); err != nil {
		t.Fatal(err)
	}
	if r.Get("spread_ratio") == "" || r.Get("spread_streams") != "130" {
		t.Fatalf("spread result: %s", r)
	}
	if err := manyListing(ctx, tg, c, r); err != nil {
		t.Fatal(err)
	}
	cur := listingCursors(tg, 140, 7)
	for _, a := range cur {
		if f.afters[a] != 3 {
			t.Fatalf("after=%q asked %d times, want 3 (%v)", a, f.afters[a], f.afters)
		}
	}
	if r.Get("list_ratio") == "" || r.Get("list_middle_p50_ms") == "" {
		t.Fatalf("listing result: %s", r)
	}
}

func TestReportJudgesManyStreams(t *testing.T) {
	const lines = `
RESULT workload=many server=dsd round=1 case=many-1m streams=1000000 per_stream_b=900 spread_streams=100000 spread_ratio=0.85 list_ratio=1.1
RESULT workload=startup server=dsd round=1 case=many-1m-startup ready_ms=40
RESULT workload=many server=dsd round=2 case=many-1m streams=1000000 per_stream_b=2000 spread_streams=100000 spread_ratio=0.5 list_ratio=3
`
	var res results
	if err := loadResults(strings.NewReader(lines), &res); err != nil {
		t.Fatal(err)
	}
	c, _ := caseByName("many-1m")
	ok := c.Check(map[string]*serverAgg{kindDSD: {runs: res.byCase["many-1m"][kindDSD].runs[:1]}})
	if !ok.ok {
		t.Fatalf("round 1 alone meets the target: %s", ok.why)
	}
	bad := c.Check(map[string]*serverAgg{kindDSD: {runs: res.byCase["many-1m"][kindDSD].runs[1:]}})
	for _, want := range []string{"per_stream_b", "spread_ratio", "list_ratio"} {
		if bad.ok || !strings.Contains(bad.why, want) {
			t.Fatalf("round 2 alone: %+v, want a miss on %s", bad, want)
		}
	}
	var b strings.Builder
	renderTable(&b, &res)
	if !strings.Contains(b.String(), "RSS per stream") || !strings.Contains(b.String(), "time to first HEAD") {
		t.Fatalf("table lacks the many-streams rows:\n%s", b.String())
	}
}

func TestSpreadAppendsStartWritersAtSpacedStreams(t *testing.T) {
	var mu sync.Mutex
	hit := map[string]int{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hit[r.URL.Path]++
		mu.Unlock()
		w.WriteHeader(204)
	})
	tg := testTarget(t, h, 4)
	st := appendLoop(context.Background(), tg, appendConfig{Streams: 400, Conns: 4, Size: 10, loopWindow: loopWindow{Duration: 50 * time.Millisecond}, Spread: true}, "text/plain")
	if st.Statuses.Errors() != 0 {
		t.Fatal(st.Statuses)
	}
	for _, s := range []string{"0", "100", "200", "300"} {
		if hit["/v1/stream/t-"+s] == 0 {
			t.Fatalf("no writer started at stream %s: %v", s, hit)
		}
	}
}

func TestParseStatusKiBReadsAnyField(t *testing.T) {
	const status = "Name:\tdsd\nVmRSS:\t  750892 kB\nRssAnon:\t  250000 kB\nRssFile:\t  500892 kB\n"
	for field, want := range map[string]int64{"VmRSS": 750892, "RssAnon": 250000, "RssFile": 500892} {
		if got, err := parseStatusKiB(strings.NewReader(status), field); err != nil || got != want {
			t.Errorf("%s = %d %v, want %d", field, got, err, want)
		}
	}
	if _, err := parseStatusKiB(strings.NewReader(status), "RssShmem"); err == nil {
		t.Error("a missing field parsed")
	}
}
