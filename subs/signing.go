package subs

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"
)

// SignatureHeader is the webhook signature header (PROTOCOL §7.1, §13.2).
const SignatureHeader = "Webhook-Signature"

// JWKSContentType and JWKSCacheControl are the JWKS response's headers (PROTOCOL §6.5).
const (
	JWKSContentType  = "application/jwk-set+json"
	JWKSCacheControl = "public, max-age=300"
)

// retiredGrace is how long a retired public key stays in the JWKS: the receivers' replay
// window (PROTOCOL §6.5, §12.10: about 5 minutes).
const retiredGrace = 5 * time.Minute

// KeyID returns the kid of an Ed25519 public key: "ds_" + base64url(SHA-256 of the RFC 7638
// thumbprint input {"crv":"Ed25519","kty":"OKP","x":…}) (RFC 8037 §2; PROTOCOL §6.5).
func KeyID(pub ed25519.PublicKey) string {
	input := `{"crv":"Ed25519","kty":"OKP","x":"` + b64(pub) + `"}`
	sum := sha256.Sum256([]byte(input))
	return "ds_" + b64(sum[:])
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// signer signs webhook bodies with the active key.
type signer struct {
	key ed25519.PrivateKey
	kid string
}

func newSigner(k SigningKey) signer {
	priv := ed25519.NewKeyFromSeed(k.Seed)
	return signer{key: priv, kid: KeyID(priv.Public().(ed25519.PublicKey))}
}

// header returns the Webhook-Signature value for body sent at t:
// "t=<unix seconds>,kid=<kid>,ed25519=<unpadded base64url Ed25519 signature of "<t>.<body>">".
func (s signer) header(t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	msg := make([]byte, 0, len(ts)+1+len(body))
	msg = append(append(append(msg, ts...), '.'), body...)
	return "t=" + ts + ",kid=" + s.kid + ",ed25519=" + b64(ed25519.Sign(s.key, msg))
}

// jwk is one public key of the JWKS document.
type jwk struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	Alg string `json:"alg"`
	X   string `json:"x"`
}

// JWKSDocument returns the JWK Set of every signing key not retired for more than 5
// minutes at now: {"keys":[{"kty":"OKP","crv":"Ed25519","kid","use":"sig","alg":"EdDSA",
// "x"}]} (PROTOCOL §6.5, RFC 8037). It never contains private material.
func JWKSDocument(keys []SigningKey, now time.Time) []byte {
	set := struct {
		Keys []jwk `json:"keys"`
	}{Keys: []jwk{}}
	for _, k := range keys {
		if !k.Retired.IsZero() && now.After(k.Retired.Add(retiredGrace)) {
			continue
		}
		pub := ed25519.NewKeyFromSeed(k.Seed).Public().(ed25519.PublicKey)
		set.Keys = append(set.Keys, jwk{Kty: "OKP", Crv: "Ed25519", Kid: KeyID(pub), Use: "sig", Alg: "EdDSA", X: b64(pub)})
	}
	b, _ := json.Marshal(set) // plain strings: cannot fail
	return b
}

// activeKey returns the newest key that is not retired.
func activeKey(keys []SigningKey) (SigningKey, bool) {
	var best SigningKey
	found := false
	for _, k := range keys {
		if k.Retired.IsZero() && (!found || k.Created.After(best.Created)) {
			best, found = k, true
		}
	}
	return best, found
}

// ensureKeys completes k with an active signing key and a token key where they are
// missing, drawing from rnd; changed reports whether anything was generated (the caller
// then saves k).
func ensureKeys(k Keys, now time.Time, rnd io.Reader) (out Keys, changed bool, err error) {
	out = k
	if _, ok := activeKey(k.Signing); !ok {
		seed := make([]byte, ed25519.SeedSize)
		if _, err := io.ReadFull(rnd, seed); err != nil {
			return k, false, fmt.Errorf("subs: generating a signing key: %w", err)
		}
		out.Signing = append(append([]SigningKey(nil), k.Signing...), SigningKey{Seed: seed, Created: now.UTC()})
		changed = true
	}
	if len(k.TokenKey) < 32 {
		tk := make([]byte, 32)
		if _, err := io.ReadFull(rnd, tk); err != nil {
			return k, false, fmt.Errorf("subs: generating the token key: %w", err)
		}
		out.TokenKey, changed = tk, true
	}
	for _, s := range out.Signing {
		if len(s.Seed) != ed25519.SeedSize {
			return k, false, fmt.Errorf("subs: a stored signing key has %d bytes, want %d", len(s.Seed), ed25519.SeedSize)
		}
	}
	return out, changed, nil
}

var cryptoRand io.Reader = rand.Reader
