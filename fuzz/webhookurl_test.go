package fuzz

import (
	"errors"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/dsd-project/dsd/subs"
)

// FuzzWebhookURL: subs.CheckWebhookURL (D10, design 5.6) never panics, refuses only with
// WEBHOOK_URL_REJECTED, and accepts only absolute http(s) URLs with a host and no userinfo
// whose IP-literal host is a public address (loopback only with the development exception,
// http only then) and whose name is not a loopback or numeric name.
func FuzzWebhookURL(f *testing.F) {
	for _, s := range []string{
		"https://hooks.example.com/x", "http://10.0.0.1/hook", "http://127.0.0.1:1/x",
		"https://[::ffff:10.0.0.1]/", "https://2130706433/", "https://user@example.com/",
		"https://[fe80::1%25eth0]/", "https://[64:ff9b::a00:1]/", "http://localhost:80/",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, raw string, loopback bool) {
		err := subs.CheckWebhookURL(raw, loopback)
		if err != nil {
			if !errors.Is(err, subs.ErrURLRejected) {
				t.Fatalf("%q: %v is not WEBHOOK_URL_REJECTED", raw, err)
			}
			return
		}
		u, perr := url.Parse(raw)
		if perr != nil || u.User != nil || u.Hostname() == "" || (u.Scheme != "https" && u.Scheme != "http") {
			t.Fatalf("accepted %q (scheme %q, user %v, host %q, parse %v)", raw, u.Scheme, u.User, u.Hostname(), perr)
		}
		host := u.Hostname()
		a, ipErr := netip.ParseAddr(host)
		dev := loopback && (strings.EqualFold(host, "localhost") || (ipErr == nil && a.Unmap().IsLoopback()))
		if u.Scheme == "http" && !dev {
			t.Fatalf("accepted http to %q outside the development exception", raw)
		}
		if ipErr == nil {
			a = a.Unmap()
			if !dev && (a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsUnspecified() || a.IsMulticast()) {
				t.Fatalf("accepted %q: %s is not public", raw, a)
			}
			return
		}
		if !dev && (strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") || strings.HasSuffix(strings.ToLower(strings.TrimSuffix(host, ".")), ".localhost")) {
			t.Fatalf("accepted the loopback name %q", raw)
		}
	})
}
