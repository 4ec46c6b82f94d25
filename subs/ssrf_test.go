package subs

import (
	"errors"
	"net/netip"
	"testing"
)

func TestCheckWebhookURL(t *testing.T) {
	cases := []struct {
		url      string
		loopback bool
		ok       bool
	}{
		{"https://hooks.example.com/x", false, true},
		{"https://93.184.216.34:8443/x", false, true},
		{"https://[2606:4700::1111]/x", false, true},
		{"https://172.32.0.1/x", false, true}, // just outside 172.16/12
		{"http://hooks.example.com/x", false, false},
		{"http://10.0.0.1/hook", false, false},
		{"http://10.0.0.1/hook", true, false},
		{"https://10.0.0.1/hook", true, false},
		{"https://172.16.0.1/", false, false},
		{"https://192.168.1.1/", false, false},
		{"https://169.254.169.254/latest/meta-data", false, false},
		{"https://[fe80::1]/", false, false},
		{"https://[fd00:ec2::254]/", false, false},
		{"https://100.64.0.1/", false, false},
		{"https://100.127.255.255/", false, false},
		{"https://0.0.0.0/", false, false},
		{"https://0.1.2.3/", false, false},
		{"https://[::]/", false, false},
		{"https://224.0.0.1/", false, false},
		{"https://255.255.255.255/", false, false},
		{"https://192.0.0.8/", false, false},
		{"https://198.18.0.1/", false, false},
		{"https://[::ffff:10.0.0.1]/", false, false},
		{"https://[::ffff:127.0.0.1]/", false, false},
		{"https://[64:ff9b::a00:1]/", false, false},    // NAT64 of 10.0.0.1
		{"https://[2002:a00:1::]/", false, false},      // 6to4 of 10.0.0.1
		{"https://[64:ff9b::5db8:d822]/", false, true}, // NAT64 of a public address
		{"https://[::127.0.0.1]/", false, false},       // IPv4-compatible (deprecated) loopback
		{"https://[::a00:1]/", false, false},           // IPv4-compatible 10.0.0.1
		{"https://[64:ff9b:1::7f00:1]/", false, false}, // local-use NAT64 (RFC 8215)
		{"https://[fec0::1]/", false, false},           // site-local (deprecated)
		{"https://93.184.216.34:99999/x", false, false},
		{"https://93.184.216.34:0/x", false, false},
		{"https://hooks.example.com:http/x", false, false},
		{"http://127.0.0.1:65536/x", true, false},
		{"https://127.0.0.1/", false, false},
		{"https://[::1]/", false, false},
		{"https://localhost/", false, false},
		{"https://LOCALHOST./", false, false},
		{"https://a.localhost/", false, false},
		{"https://2130706433/", false, false},
		{"https://0x7f.1/", false, false},
		{"https://017.0.0.1/", false, false},
		{"https://1.2.3.256/", false, false},
		{"https://user:pw@example.com/", false, false},
		{"https://user@127.0.0.1/", true, false},
		{"ftp://example.com/", false, false},
		{"/relative/hook", false, false},
		{"https:///nohost", false, false},
		{"mailto:a@example.com", false, false},
		{"http://127.0.0.1:1/x", true, true},
		{"http://127.9.9.9/x", true, true},
		{"https://127.0.0.1/x", true, true},
		{"http://localhost:8080/x", true, true},
		{"http://[::1]:9/x", true, true},
		{"http://127.0.0.1:1/x", false, false},
		{"http://a.localhost/x", true, false},
	}
	for _, tc := range cases {
		err := CheckWebhookURL(tc.url, tc.loopback)
		if (err == nil) != tc.ok {
			t.Errorf("CheckWebhookURL(%q, loopback=%v) = %v, want ok=%v", tc.url, tc.loopback, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrURLRejected) {
			t.Errorf("%q: error %v is not WEBHOOK_URL_REJECTED", tc.url, err)
		}
	}
}

func TestDeniedAddrAtDialTime(t *testing.T) {
	for _, s := range []string{"10.1.2.3", "127.0.0.1", "::1", "169.254.169.254", "100.64.0.1", "::ffff:192.168.0.1", "fc00::1"} {
		if deniedAddr(netip.MustParseAddr(s), false) == "" {
			t.Errorf("%s allowed", s)
		}
	}
	if r := deniedAddr(netip.MustParseAddr("127.0.0.1"), true); r != "" {
		t.Errorf("loopback refused with the exception: %s", r)
	}
	if r := deniedAddr(netip.MustParseAddr("10.0.0.1"), true); r == "" {
		t.Error("the loopback exception let a private address through")
	}
	if r := deniedAddr(netip.MustParseAddr("8.8.8.8"), false); r != "" {
		t.Errorf("public address refused: %s", r)
	}
}
