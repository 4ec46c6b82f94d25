package main

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"sync/atomic"
)

// certSource serves the --tls-cert/--tls-key pair and reloads it on demand (SIGHUP): new
// handshakes get the new certificate, connections already open keep theirs.
type certSource struct {
	certFile, keyFile string
	cur               atomic.Pointer[tls.Certificate]
}

// newCertSource loads the pair once. Errors name the files.
func newCertSource(certFile, keyFile string) (*certSource, error) {
	c := &certSource{certFile: certFile, keyFile: keyFile}
	return c, c.reload()
}

// reload reads the pair again; on error the previous certificate stays in use.
func (c *certSource) reload() error {
	cert, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
	if err != nil {
		return fmt.Errorf("TLS key pair (--tls-cert %s, --tls-key %s): %w", c.certFile, c.keyFile, err)
	}
	c.cur.Store(&cert)
	return nil
}

func (c *certSource) get(*tls.ClientHelloInfo) (*tls.Certificate, error) { return c.cur.Load(), nil }

// tlsConfig is the server's TLS configuration over c (HTTP/2 and HTTP/1.1 by ALPN).
func (c *certSource) tlsConfig() *tls.Config {
	return &tls.Config{GetCertificate: c.get, MinVersion: tls.VersionTLS12, NextProtos: []string{"h2", "http/1.1"}}
}

// protocols is what the main listener speaks: HTTP/1.1, and HTTP/2 over TLS or, with h2c,
// HTTP/2 with prior knowledge on plain TCP.
func protocols(tls, h2c bool) *http.Protocols {
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetHTTP2(tls)
	p.SetUnencryptedHTTP2(h2c)
	return &p
}
