package subs

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// errDialDenied is the failure of an attempt whose address the dial guard refused.
var errDialDenied = errors.New("webhook target address refused")

type loopbackKey struct{}

// withLoopback marks a request context as allowed to connect to loopback: the URL was a
// development-exception URL and the worker runs with AllowLoopback.
func withLoopback(ctx context.Context, ok bool) context.Context {
	return context.WithValue(ctx, loopbackKey{}, ok)
}

func loopbackAllowed(ctx context.Context) bool {
	ok, _ := ctx.Value(loopbackKey{}).(bool)
	return ok
}

// guard enforces the deny list on the address actually connected (design 5.6), so DNS
// rebinding and names that resolve privately cannot reach a forbidden target. onConnect,
// when set (tests), sees every address the guard let through, just before connect(2).
type guard struct {
	resolve   func(ctx context.Context, host string) ([]netip.Addr, error)
	onConnect func(netip.AddrPort)
}

// control is the net.Dialer.Control hook: it runs before connect(2) for each address.
func (g *guard) control(loopbackOK bool) func(network, address string, _ syscall.RawConn) error {
	return func(network, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("%w: %s", errDialDenied, address)
		}
		if r := deniedAddr(ap.Addr(), loopbackOK); r != "" {
			return fmt.Errorf("%w: %s is %s", errDialDenied, ap.Addr(), r)
		}
		if g.onConnect != nil {
			g.onConnect(ap)
		}
		return nil
	}
}

// dial resolves host itself (through the injectable resolver) and dials each address in
// turn with the guard in Control.
func (g *guard) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else if addrs, err = g.resolve(ctx, host); err != nil {
		return nil, err
	}
	d := net.Dialer{Control: g.control(loopbackAllowed(ctx))}
	var firstErr error
	for _, a := range addrs {
		c, err := d.DialContext(ctx, network, net.JoinHostPort(a.Unmap().String(), port))
		if err == nil {
			return c, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	if firstErr == nil {
		firstErr = fmt.Errorf("no address for %s", host)
	}
	return nil, firstErr
}

func defaultResolve(ctx context.Context, host string) ([]netip.Addr, error) {
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// newClient returns the webhook HTTP client: its own transport (no proxy from the
// environment, the dial guard, TLS verification on), per-attempt timeout, and no redirects
// (a 3xx is a failed attempt).
func newClient(g *guard, timeout time.Duration) *http.Client {
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           g.dial,
		ForceAttemptHTTP2:     true,
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       30 * time.Second,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
	}
	return &http.Client{
		Transport:     tr,
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
