package main

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// writeSelfSigned writes a self-signed certificate for 127.0.0.1 with the given serial to
// dir/cert.pem and dir/key.pem, and returns it.
func writeSelfSigned(t *testing.T, dir string, serial int64) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "dsd test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "cert.pem"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(filepath.Join(dir, "key.pem"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	return cert
}

// h2Client trusts roots and speaks HTTP/2 only, over TLS (or h2c without roots).
func h2Client(roots ...*x509.Certificate) *http.Client {
	var p http.Protocols
	tr := &http.Transport{Protocols: &p}
	if len(roots) == 0 {
		p.SetUnencryptedHTTP2(true)
	} else {
		p.SetHTTP2(true)
		pool := x509.NewCertPool()
		for _, c := range roots {
			pool.AddCert(c)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool}
	}
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// sseStreams opens n SSE reads of u on cl at once and checks that each is HTTP/2 and
// delivers want (the flushing ResponseWriter path: HTTP/2 cannot be hijacked).
func sseStreams(t *testing.T, cl *http.Client, u string, n int, want string) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan string, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := cl.Get(u + "?offset=-1&live=sse")
			if err != nil {
				errs <- err.Error()
				return
			}
			defer resp.Body.Close()
			if resp.ProtoMajor != 2 || resp.StatusCode != 200 {
				errs <- resp.Proto + " " + resp.Status
				return
			}
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				if sc.Text() == "data:"+want {
					return
				}
			}
			errs <- "stream ended without the data event"
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// dsd serves HTTPS with HTTP/2 (many SSE streams on one connection) and reloads its
// certificate on SIGHUP. Spec: D12.
func TestTLSHTTP2AndReload(t *testing.T) {
	if testing.Short() {
		t.Skip("starts dsd processes; skipped with -short")
	}
	dir := t.TempDir()
	first := writeSelfSigned(t, dir, 1)
	p := startDSD(t, t.TempDir(), "--tls-cert", filepath.Join(dir, "cert.pem"), "--tls-key", filepath.Join(dir, "key.pem"))
	if !strings.HasPrefix(p.url, "https://") {
		t.Fatalf("url %s", p.url)
	}
	var conns sync.Map
	cl := h2Client(first)
	cl.Transport.(*http.Transport).DialContext = countingDial(&conns)
	resp, err := cl.Do(mustReq(t, "PUT", p.url+"/v1/stream/h2", "text/plain", "over-h2"))
	if err != nil || resp.StatusCode != 201 || resp.ProtoMajor != 2 {
		t.Fatalf("PUT over h2: %v %v", resp, err)
	}
	sseStreams(t, cl, p.url+"/v1/stream/h2", 25, "over-h2")
	if resp, err := cl.Get(p.url + "/v1/stream/h2?offset=now&live=long-poll"); err != nil || resp.StatusCode != 204 || resp.ProtoMajor != 2 {
		t.Fatalf("long-poll over h2: %v %v", resp, err)
	}
	if n := mapLen(&conns); n != 1 {
		t.Errorf("%d connections for 25 SSE streams, want 1", n)
	}
	second := writeSelfSigned(t, dir, 2)
	p.cmd.Process.Signal(syscall.SIGHUP)
	waitLog(t, p, func() bool { return strings.Contains(p.log.String(), "TLS certificate reloaded") })
	conn, err := tls.Dial("tcp", strings.TrimPrefix(p.url, "https://"), &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if got := conn.ConnectionState().PeerCertificates[0].SerialNumber; got.Cmp(second.SerialNumber) != 0 {
		t.Fatalf("after SIGHUP the server presents serial %v, want %v", got, second.SerialNumber)
	}
}

// --h2c serves HTTP/2 with prior knowledge on plain TCP, SSE included.
func TestH2C(t *testing.T) {
	if testing.Short() {
		t.Skip("starts dsd processes; skipped with -short")
	}
	p := startDSD(t, t.TempDir(), "--h2c")
	cl := h2Client()
	resp, err := cl.Do(mustReq(t, "PUT", p.url+"/v1/stream/c", "text/plain", "clear"))
	if err != nil || resp.StatusCode != 201 || resp.ProtoMajor != 2 {
		t.Fatalf("PUT over h2c: %v %v", resp, err)
	}
	sseStreams(t, cl, p.url+"/v1/stream/c", 5, "clear")
	mustDo(t, "GET", p.url+"/v1/stream/c?offset=-1", "", "", nil, 200) // HTTP/1.1 still served
}

func mustReq(t *testing.T, method, u, ct, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	return req
}

// countingDial dials like net.Dialer and records each connection's local address in m.
func countingDial(m *sync.Map) func(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err == nil {
			m.Store(c.LocalAddr().String(), true)
		}
		return c, err
	}
}

func mapLen(m *sync.Map) int {
	n := 0
	m.Range(func(any, any) bool { n++; return true })
	return n
}
