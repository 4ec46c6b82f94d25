// Package browsertest runs the browser tests' headless Chromium through chromedp: a tab
// per test, text waits, and full-page screenshots under .reports/screens/ at the module
// root. `make browser` installs Debian's chromium when missing; without it tests skip
// saying so.
package browsertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Chromium returns the browser to drive: $CHROMIUM, else chromium or chromium-browser
// on PATH; "" when there is none.
func Chromium() string {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// New starts headless Chromium (1280x900, --no-sandbox when root) and returns a tab's
// context, closed with the test, with an overall deadline of timeout. It skips t, naming
// the cause, when no Chromium is installed.
func New(t *testing.T, timeout time.Duration) context.Context {
	t.Helper()
	bin := Chromium()
	if bin == "" {
		t.Skip("no Chromium (chromium, chromium-browser or $CHROMIUM): `make browser` installs Debian's chromium as root")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin),
		chromedp.WindowSize(1280, 900), chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-dev-shm-usage", true))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox)
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx, chromedp.WithErrorf(t.Logf))
	ctx, cancelTime := context.WithTimeout(ctx, timeout)
	t.Cleanup(func() { cancelTime(); cancelTab(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("starting %s: %v", bin, err)
	}
	return ctx
}

// WaitText waits until the element matching the CSS selector sel exists and its text
// contains want, failing t after timeout with the element's last text.
func WaitText(t *testing.T, ctx context.Context, sel, want string, timeout time.Duration) {
	t.Helper()
	js := fmt.Sprintf(`(() => { const e = document.querySelector(%q); return !!e && e.textContent.includes(%q); })()`, sel, want)
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(timeout)))
	if err != nil {
		got, _ := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`(document.querySelector(%q) || {textContent: "(no element)"}).textContent`, sel)))
		t.Fatalf("%s never contained %q (%v); it reads: %.600s", sel, want, err, got)
	}
}

// WaitJS waits until the JavaScript expression expr is truthy, failing t after timeout.
func WaitJS(t *testing.T, ctx context.Context, expr string, timeout time.Duration) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(timeout))); err != nil {
		t.Fatalf("never true: %s (%v)", expr, err)
	}
}

// Screenshot writes a full-page PNG of the tab to .reports/screens/NAME.png at the module
// root and returns its path.
func Screenshot(t *testing.T, ctx context.Context, name string) string {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	dir := filepath.Join(moduleRoot(t), ".reports", "screens")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
	return path
}

// moduleRoot is the nearest directory above the working directory holding go.mod.
func moduleRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}
