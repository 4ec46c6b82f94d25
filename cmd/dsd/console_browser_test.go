package main

import (
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/dsd-project/dsd/internal/browsertest"
)

// send makes one request to dsd's public listener and fails t unless it answers want.
func send(t *testing.T, method, url, ctype, body string, want int, headers ...string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != want {
		t.Fatalf("%s %s: %d, want %d", method, url, res.StatusCode, want)
	}
}

// The console in headless Chromium against a real dsd: the landing page lists the
// buckets with their stream counts, a bucket lists its streams (and filters them by
// prefix), a stream's page shows its metadata, attributes, fork parent and records, and
// its live tail shows messages appended after the page opened, also after dsd ended the
// SSE response (--sse-max-age 1s) and the console resumed from the last position, and
// after dsd was restarted on the same addresses.
// Screenshots: .reports/screens/console-buckets.png, console-stream-live.png.
func TestConsoleInBrowser(t *testing.T) {
	ctx := browsertest.New(t, 90*time.Second)
	data := t.TempDir()
	fixed := []string{"--addr", freeAddr(t), "--admin-addr", freeAddr(t), "--sse-max-age", "1s", "--unsafe-no-sync", "--log-requests=false"}
	p := startDSD(t, data, fixed...)
	pub, admin := p.url, p.adminURL(t)
	for _, b := range []string{"shop", "chat-rooms", "telemetry"} {
		send(t, "PUT", pub+"/"+b, "", "", 201)
	}
	send(t, "PUT", pub+"/shop/orders", "application/json", `[{"id":1,"item":"book","qty":2},{"id":2,"item":"pen","qty":10}]`, 201,
		"Stream-Attrs", `{"title":"Orders","metadata":{"owner":"team-a","retention":{"days":30}}}`)
	send(t, "PUT", pub+"/shop/order-audit", "text/plain", "created\n", 201)
	send(t, "PUT", pub+"/shop/invoices", "application/octet-stream", "\x00\x01PDF", 201)
	send(t, "PUT", pub+"/shop/orders-replay", "", "", 201, "Stream-Forked-From", "/shop/orders")

	// The landing page: every bucket and its stream count, without any input.
	err := chromedp.Do(ctx, chromedp.Navigate(admin+"/console/"))
	if err != nil {
		t.Fatal(err)
	}
	browsertest.WaitText(t, ctx, "table.buckets", "chat-rooms", 10*time.Second)
	browsertest.WaitText(t, ctx, "table.buckets", "shop4", 5*time.Second) // id then count cell
	browsertest.WaitText(t, ctx, "#figures", "Streams", 10*time.Second)
	browsertest.Screenshot(t, ctx, "console-buckets")

	// A bucket's streams, then a prefix filter.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`a[href="#/b/shop"]`))); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitText(t, ctx, "table.streams", "invoices", 10*time.Second)
	browsertest.WaitText(t, ctx, "table.streams", "application/octet-stream", time.Second)
	browsertest.Screenshot(t, ctx, "console-bucket-streams")
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS("#prefix"), "order"), chromedp.Click(chromedp.CSS("form.toolbar button"))); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitJS(t, ctx, `Array.from(document.querySelectorAll("table.streams tbody tr td:first-child"), e => e.textContent).join() === "order-audit,orders,orders-replay"`, 10*time.Second)

	// Binary data as a hex dump.
	if err := chromedp.Do(ctx, chromedp.Navigate(admin+"/console/#/s/shop/invoices")); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitText(t, ctx, "#recent", "00000000  00 01 50 44 46", 10*time.Second)
	if err := chromedp.Do(ctx, chromedp.NavigateBack()); err != nil {
		t.Fatal(err)
	}

	// A fork's page names its parent.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`a[href="#/s/shop/orders-replay"]`))); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitText(t, ctx, "#meta", "/shop/orders at offset", 10*time.Second)

	// A missing stream says so.
	if err := chromedp.Do(ctx, chromedp.Navigate(admin+"/console/#/s/shop/no-such")); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitText(t, ctx, "#view .error", "404: no stream shop/no-such", 10*time.Second)

	// The JSON stream: metadata, attributes, records, then the live tail.
	if err := chromedp.Do(ctx, chromedp.Navigate(admin+"/console/#/s/shop/orders")); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitText(t, ctx, "#live-status", "live", 10*time.Second)
	browsertest.WaitText(t, ctx, "#meta", "application/json", time.Second)
	browsertest.WaitText(t, ctx, "#attrs", "team-a", time.Second)
	browsertest.WaitText(t, ctx, "#recent", `"item": "pen"`, time.Second)
	send(t, "POST", pub+"/shop/orders", "application/json", `{"id":3,"item":"lamp","qty":1}`, 204)
	browsertest.WaitText(t, ctx, "#live-rows", `"item": "lamp"`, 10*time.Second)
	browsertest.WaitText(t, ctx, "#live-rows td.num", "2", time.Second) // its record ordinal

	// dsd ends each SSE response after 1 s; the tail reconnects from its last offset and
	// shows what is appended next, once.
	browsertest.WaitText(t, ctx, "#live-info", "2 connections", 10*time.Second)
	send(t, "POST", pub+"/shop/orders", "application/json", `{"id":4,"item":"desk","qty":1}`, 204)
	browsertest.WaitText(t, ctx, "#live-rows", `"item": "desk"`, 10*time.Second)
	if rows, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#live-rows tr").length`)); rows != 2 {
		t.Fatalf("live tail: %d rows, want 2 (lamp, desk: nothing repeated on reconnect)", rows)
	}
	browsertest.WaitText(t, ctx, `#figures [data-metric="dsd_appends_total"] .v`, "2", 5*time.Second) // refreshed after live events
	browsertest.Screenshot(t, ctx, "console-stream-live")

	// A restart on the same addresses: the tail reconnects (with backoff) and carries on.
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-p.done
	browsertest.WaitText(t, ctx, "#live-status", "disconnected", 10*time.Second)
	p = startDSD(t, data, fixed...)
	browsertest.WaitText(t, ctx, "#live-status", "live", 15*time.Second)
	send(t, "POST", p.url+"/shop/orders", "application/json", `{"id":5,"item":"chair","qty":4}`, 204)
	browsertest.WaitText(t, ctx, "#live-rows", `"item": "chair"`, 10*time.Second)
}

// freeAddr is a loopback address with a port free a moment ago (for a restart on the
// same address).
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// With --auth-tokens the console asks for a token, then lists what the token may read;
// the token stays in the tab (sessionStorage) across reloads.
func TestConsoleWithTokens(t *testing.T) {
	ctx := browsertest.New(t, 60*time.Second)
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte("root-token\nreader-token read:shop\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startDSD(t, t.TempDir(), "--auth-tokens", tokens, "--unsafe-no-sync", "--log-requests=false")
	pub, admin := p.url, p.adminURL(t)
	send(t, "PUT", pub+"/shop", "", "", 201, "Authorization", "Bearer root-token")
	send(t, "PUT", pub+"/private", "", "", 201, "Authorization", "Bearer root-token")
	send(t, "PUT", pub+"/shop/cart", "text/plain", "x", 201, "Authorization", "Bearer root-token")

	if err := chromedp.Do(ctx, chromedp.Navigate(admin+"/console/")); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitText(t, ctx, "#view", "401", 10*time.Second)
	browsertest.WaitText(t, ctx, "#view", "enter a token above", time.Second)
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS("#token"), "reader-token"), chromedp.Click(chromedp.CSS("#token-form button"))); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitText(t, ctx, "table.buckets", "shop", 10*time.Second)
	if err := chromedp.Do(ctx, chromedp.Reload(), chromedp.Navigate(admin+"/console/#/s/shop/cart")); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitText(t, ctx, "#meta", "text/plain", 10*time.Second) // the token survived the reload
	if err := chromedp.Do(ctx, chromedp.Navigate(admin+"/console/#/")); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitJS(t, ctx, `Array.from(document.querySelectorAll("table.buckets td:first-child"), e => e.textContent).join() === "shop"`, 10*time.Second)
}
