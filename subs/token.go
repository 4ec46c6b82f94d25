package subs

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"
)

// Token kinds: a webhook wake's callback token, and a pull-wake claim's token.
const (
	kindCallback = "callback"
	kindClaim    = "claim"
)

// tokenClaims are the claims of a callback or claim token (PROTOCOL §12.9: scoped to the
// subscription and generation, with an expiry). sub is "<bucket>/<id>" (bucket ids hold no
// '/'); exp is Unix seconds.
type tokenClaims struct {
	Sub  string `json:"sub"`
	Inc  uint64 `json:"inc"`
	Gen  uint64 `json:"gen"`
	Wid  string `json:"wid"`
	Kind string `json:"kind"`
	Exp  int64  `json:"exp"`
}

const tokenHeader = `{"alg":"HS256","typ":"JWT"}`

func tokenSubject(k Key) string { return k.Bucket + "/" + k.ID }

// mintToken returns a compact HS256 JWS (RFC 7515) of c under key.
func mintToken(key []byte, c tokenClaims) string {
	payload, _ := json.Marshal(c) // plain fields: cannot fail
	signing := b64([]byte(tokenHeader)) + "." + b64(payload)
	return signing + "." + b64(tokenMAC(key, signing))
}

func tokenMAC(key []byte, signing string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(signing))
	return m.Sum(nil)
}

// checkToken verifies tok for kind on key k at now, in the order signature → kind and
// subscription → expiry (design 5.4). It returns the claims; the caller fences them
// against the current wake. Errors: ErrTokenInvalid, ErrTokenExpired.
func checkToken(key []byte, tok, kind string, k Key, now time.Time) (tokenClaims, error) {
	var c tokenClaims
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return c, ErrTokenInvalid
	}
	mac, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || !hmac.Equal(mac, tokenMAC(key, parts[0]+"."+parts[1])) {
		return c, ErrTokenInvalid
	}
	header, err1 := base64.RawURLEncoding.DecodeString(parts[0])
	payload, err2 := base64.RawURLEncoding.DecodeString(parts[1])
	if err1 != nil || err2 != nil || string(header) != tokenHeader || json.Unmarshal(payload, &c) != nil {
		return c, ErrTokenInvalid
	}
	if c.Kind != kind || c.Sub != tokenSubject(k) {
		return c, ErrTokenInvalid
	}
	if now.Unix() >= c.Exp {
		return c, ErrTokenExpired
	}
	return c, nil
}
