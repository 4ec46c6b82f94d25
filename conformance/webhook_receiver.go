package conformance

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"
)

// webhookReceiver is a webhook endpoint the kit runs on 127.0.0.1 (loopback only): it
// records every POST and answers each with the configured body.
type webhookReceiver struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []webhookCall
	ch  chan struct{}
	// reply is the JSON body answered with status 200 (`{}` unless set).
	reply string
}

// webhookCall is one received delivery.
type webhookCall struct {
	Header http.Header
	Body   []byte
}

// newWebhookReceiver starts a receiver; it is closed when the spec ends.
func (s *S) newWebhookReceiver(reply string) *webhookReceiver {
	wr := &webhookReceiver{reply: reply, ch: make(chan struct{}, 64)}
	wr.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		wr.mu.Lock()
		wr.got = append(wr.got, webhookCall{Header: r.Header.Clone(), Body: b})
		reply := wr.reply
		wr.mu.Unlock()
		select {
		case wr.ch <- struct{}{}:
		default:
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, reply)
	}))
	s.onFinish(wr.srv.Close)
	return wr
}

// URL is the receiver's hook URL.
func (wr *webhookReceiver) URL() string { return wr.srv.URL + "/hook" }

// next waits up to d for the n-th delivery (1-based) and returns it.
func (wr *webhookReceiver) next(n int, d time.Duration) (webhookCall, bool) {
	deadline := time.After(d)
	for {
		wr.mu.Lock()
		if len(wr.got) >= n {
			c := wr.got[n-1]
			wr.mu.Unlock()
			return c, true
		}
		wr.mu.Unlock()
		select {
		case <-wr.ch:
		case <-deadline:
			return webhookCall{}, false
		}
	}
}

// verifyWebhookSignature checks Webhook-Signature: t=<s>,kid=<kid>,ed25519=<b64url> over
// "<t>.<body>" with the JWKS key of that kid, |now - t| <= 300 s (base protocol §7.1).
func verifyWebhookSignature(c webhookCall, jwks []byte, now time.Time) error {
	parts := map[string]string{}
	for _, p := range strings.Split(c.Header.Get("Webhook-Signature"), ",") {
		k, v, _ := strings.Cut(p, "=")
		parts[k] = v
	}
	t, err := strconv.ParseInt(parts["t"], 10, 64)
	if err != nil {
		return fmt.Errorf("no t= in %q", c.Header.Get("Webhook-Signature"))
	}
	if d := now.Unix() - t; d > 300 || d < -300 {
		return fmt.Errorf("timestamp %d is %d s off", t, d)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts["ed25519"])
	if err != nil {
		return fmt.Errorf("ed25519= is not unpadded base64url: %v", err)
	}
	pub, err := jwksKey(jwks, parts["kid"])
	if err != nil {
		return err
	}
	if !ed25519.Verify(pub, []byte(parts["t"]+"."+string(c.Body)), sig) {
		return fmt.Errorf("signature does not verify with kid %q", parts["kid"])
	}
	return nil
}

// jwksKey returns the Ed25519 public key of kid in a JWK Set.
func jwksKey(jwks []byte, kid string) (ed25519.PublicKey, error) {
	var set struct {
		Keys []struct{ Kty, Crv, Kid, X string } `json:"keys"`
	}
	if err := json.Unmarshal(jwks, &set); err != nil {
		return nil, fmt.Errorf("JWKS is not JSON: %v", err)
	}
	for _, k := range set.Keys {
		if k.Kid == kid && k.Kty == "OKP" && k.Crv == "Ed25519" {
			x, err := base64.RawURLEncoding.DecodeString(k.X)
			if err != nil || len(x) != ed25519.PublicKeySize {
				return nil, fmt.Errorf("kid %q: bad x", kid)
			}
			return ed25519.PublicKey(x), nil
		}
	}
	return nil, fmt.Errorf("no OKP Ed25519 key with kid %q in the JWKS", kid)
}
