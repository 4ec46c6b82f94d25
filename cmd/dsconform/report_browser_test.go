package main

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/dsd-project/dsd/conformance"
	"github.com/dsd-project/dsd/httpd"
	"github.com/dsd-project/dsd/internal/browsertest"
	"github.com/dsd-project/dsd/internal/testserver"
)

// The kit's report.html in headless Chromium: dsconform runs against an in-process dsd
// behind a mutant proxy that drops SSE control events (B-5.8-05) and Stream-Up-To-Date
// (B-5.6-05); the report lists the failing requirements, and their failures show expected
// and actual values and the HTTP transcript with the SSE bytes read; the verdict filter
// leaves failing requirements only. Screenshot:
// .reports/screens/kit-report-failure.png.
func TestReportInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the kit and a browser; skipped in -short mode")
	}
	ctx := browsertest.New(t, 120*time.Second)
	// Two mutants at once: SSE without control events, catch-up reads without
	// Stream-Up-To-Date (a failure of Gomega's expected/actual shape).
	var broken mutation
	for _, m := range mutants {
		switch m.breaks {
		case "B-5.8-05":
			broken.sseEvent = m.m.sseEvent
		case "B-5.6-05":
			broken.response = m.m.response
		}
	}
	h := httpd.New(httpd.EngineStore{Engine: testserver.Engine(t)}, httpd.Config{LongPollTimeout: 500 * time.Millisecond, SSEMaxAge: 5 * time.Second, CompatBucket: testserver.CompatBucket})
	dsd := httptest.NewServer(h)
	defer dsd.Close()
	defer h.Shutdown()
	proxy := httptest.NewServer(newProxy(dsd.URL, broken))
	defer proxy.Close()

	dir := t.TempDir()
	kctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	out, err := dsconformCmd(kctx, "--base-url", proxy.URL, "--surface", "flat", "--extensions", "none",
		"--label-filter", "B-5.8-05 || B-5.6-05", "--report-dir", dir, "--long-poll-timeout", "500ms", "--spec-timeout", "10s").CombinedOutput()
	if err == nil {
		t.Fatalf("the kit passed a server without SSE control events:\n%s", out)
	}
	report := filepath.Join(dir, conformance.HTMLFile)
	if _, err := os.Stat(report); err != nil {
		t.Fatalf("no %s: %v\n%s", conformance.HTMLFile, err, out)
	}

	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+report)); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitText(t, ctx, "tr#req-B-5\\.8-05", "FAIL", 5*time.Second)
	browsertest.WaitText(t, ctx, "tr#req-B-5\\.6-05", "FAIL", time.Second)
	// Some failure shows Stream-Up-To-Date's expectation split, some transcript the SSE
	// bytes and headers read (the order of failures follows the run's random order).
	some := func(sel, want string) {
		t.Helper()
		browsertest.WaitJS(t, ctx, fmt.Sprintf(`Array.from(document.querySelectorAll(%q)).some(e => e.textContent.includes(%q))`, sel, want), time.Second)
	}
	some(".failure .expected", "^(?i:true)$")
	some(".failure .expected h4", "to match regular expression")
	some(".failure pre.transcript", "event: data")
	some(".failure pre.transcript", "text/event-stream")
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const s = document.getElementById("f-verdict"); s.value = "fail"; s.dispatchEvent(new Event("change")); return true; })()`)); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitJS(t, ctx, `(() => { const v = Array.from(document.querySelectorAll("#reqs tbody tr:not(.hidden)")); return v.length > 0 && v.every(r => r.dataset.verdict === "fail"); })()`, 5*time.Second)
	browsertest.Screenshot(t, ctx, "kit-report-failure")
}
