package subs

import (
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// CheckWebhookURL is the static SSRF check of a webhook URL at PUT (PROTOCOL §6.2, §12.8;
// D10; design 5.6). No DNS is consulted: names are checked again at dial time. Accepted:
// an absolute https URL with a host and no userinfo whose host is a public name or a public
// IP literal, and a port (if any) in 1..65535; with allowLoopback (--webhook-allow-loopback) also http or https to
// "localhost", 127.0.0.0/8 or [::1]. Errors: ErrURLRejected wrapped with the reason (the
// routes answer 400 WEBHOOK_URL_REJECTED with it).
func CheckWebhookURL(raw string, allowLoopback bool) error {
	if reason := urlRejection(raw, allowLoopback); reason != "" {
		return fmt.Errorf("%w: %s", ErrURLRejected, reason)
	}
	return nil
}

func urlRejection(raw string, allowLoopback bool) string {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Opaque != "" {
		return "the webhook URL must be an absolute http(s) URL"
	}
	if u.User != nil {
		return "the webhook URL must not carry userinfo"
	}
	host := u.Hostname()
	if host == "" {
		return "the webhook URL needs a host"
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return "the webhook URL's port must be a number from 1 to 65535"
		}
	}
	dev := allowLoopback && isDevHost(host)
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && dev:
	case u.Scheme == "http":
		return "the webhook URL must use https (http only to loopback with --webhook-allow-loopback)"
	default:
		return "the webhook URL's scheme must be https"
	}
	if dev {
		return ""
	}
	if addr, err := netip.ParseAddr(host); err == nil {
		if addr.Zone() != "" {
			return "the webhook URL's host must not carry an IPv6 zone"
		}
		if r := deniedAddr(addr, false); r != "" {
			return "the webhook URL's host is " + r
		}
		return ""
	}
	return hostNameRejection(host)
}

// isDevHost reports whether host is covered by the development exception: localhost,
// 127.0.0.0/8 or ::1.
func isDevHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Zone() == "" && a.Unmap().IsLoopback()
}

// hostNameRejection refuses names that mean local targets or that some resolvers read as
// addresses (2130706433, 0x7f.1, 017.0.0.1, 1.2.3.256).
func hostNameRejection(host string) string {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return "the webhook URL's host is a loopback name"
	}
	labels := strings.Split(h, ".")
	if isNumericLabel(labels[len(labels)-1]) {
		return "the webhook URL's host is a numeric name that is not a canonical IP address"
	}
	return ""
}

func isNumericLabel(l string) bool {
	if l == "" {
		return false
	}
	if rest, ok := strings.CutPrefix(l, "0x"); ok {
		return strings.Trim(rest, "0123456789abcdef") == ""
	}
	return strings.Trim(l, "0123456789") == ""
}

// Special-purpose ranges refused as webhook targets beyond what netip classifies.
var deniedPrefixes = []struct {
	p      netip.Prefix
	reason string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "in 0.0.0.0/8 (this network)"},
	{netip.MustParsePrefix("100.64.0.0/10"), "in 100.64.0.0/10 (carrier-grade NAT)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "in 192.0.0.0/24 (IETF protocol assignments)"},
	{netip.MustParsePrefix("198.18.0.0/15"), "in 198.18.0.0/15 (benchmarking)"},
	{netip.MustParsePrefix("240.0.0.0/4"), "in 240.0.0.0/4 (reserved, broadcast)"},
	{netip.MustParsePrefix("::/96"), "an IPv4-compatible IPv6 address (deprecated, ::/96)"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "in 64:ff9b:1::/48 (local-use NAT64)"},
	{netip.MustParsePrefix("fec0::/10"), "a site-local address (deprecated, fec0::/10)"},
}

// IPv6 prefixes that embed an IPv4 address: NAT64 (the last 32 bits) and 6to4 (bits 16-48).
var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// deniedAddr returns why a is not a webhook target ("" when it may be dialled); loopback is
// allowed only with loopbackOK. Used at PUT and at connect time.
func deniedAddr(a netip.Addr, loopbackOK bool) string {
	a = a.Unmap()
	switch {
	case !a.IsValid():
		return "not an IP address"
	case a.IsLoopback():
		if loopbackOK {
			return ""
		}
		return "a loopback address"
	case a.IsUnspecified():
		return "the unspecified address"
	case a.IsPrivate():
		return "a private address"
	case a.IsLinkLocalUnicast():
		return "a link-local address"
	case a.IsMulticast() || a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast():
		return "a multicast address"
	}
	for _, d := range deniedPrefixes {
		if d.p.Contains(a) {
			return d.reason
		}
	}
	if a.Is6() {
		b := a.As16()
		var v4 netip.Addr
		switch {
		case nat64.Contains(a):
			v4 = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
		case sixToFour.Contains(a):
			v4 = netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})
		}
		if v4.IsValid() {
			if r := deniedAddr(v4, false); r != "" {
				return "an IPv6 address embedding " + r
			}
		}
	}
	return ""
}
