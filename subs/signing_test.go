package subs

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

var sigHeaderRE = regexp.MustCompile(`^t=(\d+),kid=([^,]+),ed25519=([A-Za-z0-9_-]+)$`)

// verifyWithJOSE checks a Webhook-Signature against a JWKS with go-jose, independently of
// our own key handling: the key is chosen by kid from the parsed set, and the signature is
// checked over "<t>.<body>" (PROTOCOL §7.1).
func verifyWithJOSE(t *testing.T, jwks []byte, header string, body []byte) {
	t.Helper()
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(jwks, &set); err != nil {
		t.Fatalf("go-jose cannot parse the JWKS: %v\n%s", err, jwks)
	}
	m := sigHeaderRE.FindStringSubmatch(header)
	if m == nil {
		t.Fatalf("signature header %q does not match %s", header, sigHeaderRE)
	}
	keys := set.Key(m[2])
	if len(keys) != 1 {
		t.Fatalf("kid %s: %d keys in the JWKS", m[2], len(keys))
	}
	pub, ok := keys[0].Key.(ed25519.PublicKey)
	if !ok {
		t.Fatalf("key %s is %T, want ed25519.PublicKey", m[2], keys[0].Key)
	}
	sig, err := base64.RawURLEncoding.DecodeString(m[3])
	if err != nil {
		t.Fatal(err)
	}
	if !ed25519.Verify(pub, append([]byte(m[1]+"."), body...), sig) {
		t.Fatalf("signature does not verify over t.body")
	}
}

func testKeys(t *testing.T) Keys {
	t.Helper()
	k, changed, err := ensureKeys(Keys{}, time.Unix(1e9, 0), bytes.NewReader(bytes.Repeat([]byte{7}, 64)))
	if err != nil || !changed {
		t.Fatalf("ensureKeys: %v %v", changed, err)
	}
	return k
}

func TestJWKSShapeAndKidAreRFC7638Thumbprints(t *testing.T) {
	k := testKeys(t)
	doc := JWKSDocument(k.Signing, time.Unix(1e9, 0))
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(doc, &set); err != nil {
		t.Fatal(err)
	}
	if len(set.Keys) != 1 {
		t.Fatalf("keys: %d", len(set.Keys))
	}
	jk := set.Keys[0]
	if jk.Algorithm != "EdDSA" || jk.Use != "sig" {
		t.Fatalf("alg %q use %q", jk.Algorithm, jk.Use)
	}
	tp, err := jk.Thumbprint(crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	if want := "ds_" + base64.RawURLEncoding.EncodeToString(tp); jk.KeyID != want {
		t.Fatalf("kid %s, want %s", jk.KeyID, want)
	}
	var raw struct {
		Keys []map[string]string `json:"keys"`
	}
	_ = json.Unmarshal(doc, &raw)
	if raw.Keys[0]["kty"] != "OKP" || raw.Keys[0]["crv"] != "Ed25519" || raw.Keys[0]["d"] != "" {
		t.Fatalf("JWK members: %v", raw.Keys[0])
	}
}

func TestSignatureVerifiesWithGoJOSE(t *testing.T) {
	k := testKeys(t)
	s := newSigner(k.Signing[0])
	body := []byte(`{"subscription_id":"s1","wake_id":"w_1"}`)
	at := time.Unix(1_800_000_000, 0)
	h := s.header(at, body)
	verifyWithJOSE(t, JWKSDocument(k.Signing, at), h, body)
	if !strings.HasPrefix(h, "t="+strconv.FormatInt(at.Unix(), 10)+",") {
		t.Fatalf("header %q does not carry t", h)
	}
	// A changed body must not verify (the test above can fail).
	m := sigHeaderRE.FindStringSubmatch(h)
	sig, _ := base64.RawURLEncoding.DecodeString(m[3])
	pub := ed25519.NewKeyFromSeed(k.Signing[0].Seed).Public().(ed25519.PublicKey)
	if ed25519.Verify(pub, append([]byte(m[1]+"."), `{"x":1}`...), sig) {
		t.Fatal("a signature verified over another body")
	}
}

func TestRetiredKeysStayPublishedFiveMinutes(t *testing.T) {
	k := testKeys(t)
	now := time.Unix(2e9, 0)
	old := SigningKey{Seed: bytes.Repeat([]byte{9}, 32), Created: now.Add(-time.Hour), Retired: now.Add(-4 * time.Minute)}
	gone := SigningKey{Seed: bytes.Repeat([]byte{8}, 32), Created: now.Add(-time.Hour), Retired: now.Add(-6 * time.Minute)}
	var set jose.JSONWebKeySet
	_ = json.Unmarshal(JWKSDocument(append(k.Signing, old, gone), now), &set)
	if len(set.Keys) != 2 {
		t.Fatalf("published %d keys, want the active and the recently retired one", len(set.Keys))
	}
	if a, _ := activeKey(append(k.Signing, old, gone)); !bytes.Equal(a.Seed, k.Signing[0].Seed) {
		t.Fatal("a retired key was chosen to sign")
	}
}

func TestKeysPersistAcrossRestart(t *testing.T) {
	fs := newFakeStore()
	w1, _ := New(Options{Store: fs, Clock: newFakeClock()})
	if err := w1.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	jwks1, kid1 := w1.JWKS(), w1.KeyID()
	_ = w1.Stop(context.Background())
	w2, _ := New(Options{Store: fs, Clock: newFakeClock()})
	if err := w2.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer w2.Stop(context.Background())
	if !bytes.Equal(jwks1, w2.JWKS()) || kid1 != w2.KeyID() {
		t.Fatalf("keys changed across a restart: %s vs %s", jwks1, w2.JWKS())
	}
	if fs.saves != 1 || len(fs.keys.TokenKey) != 32 {
		t.Fatalf("saves %d token key %d bytes", fs.saves, len(fs.keys.TokenKey))
	}
	if !strings.HasPrefix(kid1, "ds_") || len(kid1) != 46 {
		t.Fatalf("kid %q", kid1)
	}
}

func TestCorruptStoredKeyIsRefused(t *testing.T) {
	_, _, err := ensureKeys(Keys{Signing: []SigningKey{{Seed: []byte{1, 2}}}, TokenKey: make([]byte, 32)}, time.Now(), bytes.NewReader(nil))
	if err == nil {
		t.Fatal("a 2-byte seed was accepted")
	}
}
