package subs

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

func TestTokenRoundTripAndChecks(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	k := Key{Bucket: "b1", ID: "sub"}
	now := time.Unix(1_800_000_000, 0)
	c := tokenClaims{Sub: tokenSubject(k), Inc: 7, Gen: 3, Wid: "w_1", Kind: kindClaim, Exp: now.Add(time.Hour).Unix()}
	tok := mintToken(key, c)

	got, err := checkToken(key, tok, kindClaim, k, now)
	if err != nil || got != c {
		t.Fatalf("checkToken = %+v, %v", got, err)
	}
	cases := []struct {
		name string
		tok  string
		kind string
		key  Key
		at   time.Time
		want error
	}{
		{"other kind", tok, kindCallback, k, now, ErrTokenInvalid},
		{"other subscription", tok, kindClaim, Key{Bucket: "b1", ID: "other"}, now, ErrTokenInvalid},
		{"other bucket", tok, kindClaim, Key{Bucket: "b2", ID: "sub"}, now, ErrTokenInvalid},
		{"expired", tok, kindClaim, k, now.Add(time.Hour), ErrTokenExpired},
		{"tampered claims", tok[:strings.Index(tok, ".")+1] + b64([]byte(`{"sub":"b1/sub","gen":99}`)) + tok[strings.LastIndex(tok, "."):], kindClaim, k, now, ErrTokenInvalid},
		{"tampered signature", tok[:len(tok)-2] + "AA", kindClaim, k, now, ErrTokenInvalid},
		{"empty", "", kindClaim, k, now, ErrTokenInvalid},
		{"two parts", "a.b", kindClaim, k, now, ErrTokenInvalid},
	}
	for _, tc := range cases {
		if _, err := checkToken(key, tc.tok, tc.kind, tc.key, tc.at); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if _, err := checkToken([]byte("another key of thirty-two bytes!"), tok, kindClaim, k, now); !errors.Is(err, ErrTokenInvalid) {
		t.Errorf("another key: %v", err)
	}
}

// The tokens are standard HS256 JWTs: go-jose verifies them with the same key.
func TestTokenIsAStandardHS256JWT(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	tok := mintToken(key, tokenClaims{Sub: "b/s", Gen: 1, Wid: "w", Kind: kindCallback, Exp: 1_900_000_000})
	parsed, err := jwt.ParseSigned(tok, []jose.SignatureAlgorithm{jose.HS256})
	if err != nil {
		t.Fatal(err)
	}
	var std jwt.Claims
	if err := parsed.Claims(key, &std); err != nil {
		t.Fatal(err)
	}
	if std.Subject != "b/s" || std.Expiry.Time().Unix() != 1_900_000_000 {
		t.Fatalf("claims %+v", std)
	}
}
