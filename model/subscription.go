package model

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Subscription types (base protocol §6.2).
const (
	SubWebhook  = "webhook"
	SubPullWake = "pull-wake"
)

// Lease bounds of a subscription (base protocol §6.2): 1 s to 10 min, default 30 s.
const (
	MinLeaseTTLMs     = 1000
	MaxLeaseTTLMs     = 600_000
	DefaultLeaseTTLMs = 30_000
)

// Subscription errors (base protocol §6-§7; codes as the reference server's).
var (
	ErrBadSubscription = newErr("INVALID_REQUEST", "the subscription request is malformed")
	ErrSubExists       = newErr("SUBSCRIPTION_ALREADY_EXISTS", "a subscription with this id exists with a different configuration")
	ErrBadSubID        = newErr("INVALID_REQUEST", "a subscription id must be 1-128 characters of [A-Za-z0-9._~-], not . or .. (dot segments that clients rewrite)")
)

// SubscriptionConfig is the normalized configuration of PUT {root}__ds/subscriptions/{id}
// (base protocol §6.2): what its hash covers and what the document shows.
type SubscriptionConfig struct {
	Type        string   `json:"type"`
	Pattern     string   `json:"pattern,omitempty"`
	Streams     []string `json:"streams"` // explicit paths, normalized, sorted, unique
	WebhookURL  string   `json:"webhook_url,omitempty"`
	WakeStream  string   `json:"wake_stream,omitempty"`
	LeaseTTLMs  int64    `json:"lease_ttl_ms"`
	Description *string  `json:"description,omitempty"`
}

// subscriptionBody is the JSON of a PUT; unknown members are ignored.
type subscriptionBody struct {
	Type    *string          `json:"type"`
	Pattern *string          `json:"pattern"`
	Streams []string         `json:"streams"`
	Webhook *json.RawMessage `json:"webhook"`
	Wake    *string          `json:"wake_stream"`
	Lease   *json.Number     `json:"lease_ttl_ms"`
	Desc    *string          `json:"description"`
}

// ParseSubscription reads and normalizes a PUT body (base protocol §6.2, B-6-03): type
// webhook (webhook.url required) or pull-wake (wake_stream required); at least one of
// pattern and streams; lease_ttl_ms an integer in 1000..600000 (default 30000); paths and
// the pattern are root-relative (leading and trailing '/' dropped), paths follow the flat
// name rules. The webhook URL's safety is judged by the caller. Errors: ErrBadSubscription
// wrapped with what is wrong.
func ParseSubscription(body []byte) (SubscriptionConfig, error) {
	var b subscriptionBody
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&b); err != nil {
		return SubscriptionConfig{}, badSub("the body must be a JSON object: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return SubscriptionConfig{}, badSub("the body must be one JSON object with nothing after it")
	}
	var c SubscriptionConfig
	if b.Type == nil || (*b.Type != SubWebhook && *b.Type != SubPullWake) {
		return c, badSub("type must be %q or %q", SubWebhook, SubPullWake)
	}
	c.Type = *b.Type
	if b.Pattern != nil {
		c.Pattern = strings.Trim(*b.Pattern, "/")
		if err := CheckGlob(c.Pattern); err != nil {
			return c, err
		}
	}
	streams, err := normalizePaths(b.Streams)
	if err != nil {
		return c, err
	}
	c.Streams = streams
	if b.Pattern == nil && len(b.Streams) == 0 {
		return c, badSub("a subscription needs a pattern or streams")
	}
	if err := c.parseDelivery(b); err != nil {
		return c, err
	}
	c.LeaseTTLMs = DefaultLeaseTTLMs
	if b.Lease != nil {
		n, err := b.Lease.Int64()
		if err != nil || n < MinLeaseTTLMs || n > MaxLeaseTTLMs {
			return c, badSub("lease_ttl_ms must be an integer from %d to %d", MinLeaseTTLMs, MaxLeaseTTLMs)
		}
		c.LeaseTTLMs = n
	}
	c.Description = b.Desc
	return c, nil
}

// parseDelivery reads webhook.url or wake_stream, whichever the type needs.
func (c *SubscriptionConfig) parseDelivery(b subscriptionBody) error {
	switch c.Type {
	case SubWebhook:
		var w struct {
			URL *string `json:"url"`
		}
		if b.Webhook == nil || json.Unmarshal(*b.Webhook, &w) != nil || w.URL == nil || *w.URL == "" {
			return badSub("a webhook subscription needs webhook.url")
		}
		c.WebhookURL = *w.URL
	case SubPullWake:
		if b.Wake == nil {
			return badSub("a pull-wake subscription needs wake_stream")
		}
		ws := strings.Trim(*b.Wake, "/")
		if CheckFlatName(ws) != nil {
			return badSub("wake_stream must be a stream path")
		}
		if slices.Contains(c.Streams, ws) {
			return badSub("wake_stream cannot be one of the subscription's own streams")
		}
		c.WakeStream = ws
	}
	return nil
}

// normalizePaths trims, checks, sorts and de-duplicates explicit stream paths.
func normalizePaths(in []string) ([]string, error) {
	out := make([]string, 0, len(in))
	for _, p := range in {
		p = strings.Trim(p, "/")
		if CheckFlatName(p) != nil {
			return nil, badSub("stream path %q is not a valid stream name", p)
		}
		out = append(out, p)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// NormalizeStreamPaths is normalizePaths for POST {id}/streams (base protocol §6.4).
// Errors: ErrBadSubscription.
func NormalizeStreamPaths(in []string) ([]string, error) { return normalizePaths(in) }

// Hash is the configuration hash that decides 200 versus 409 on a repeated PUT (base
// protocol §6.2 MUST): SHA-256 over the canonical JSON of the normalized configuration
// (streams sorted and unique, default lease applied), in lowercase hex.
func (c SubscriptionConfig) Hash() string {
	b, _ := json.Marshal(c)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// CheckSubscriptionID validates a client-chosen subscription id (open in base protocol
// §6.1; dsd: 1-128 unreserved URL characters, not the dot segments "." and ".." that
// URL normalization rewrites). Errors: ErrBadSubID.
func CheckSubscriptionID(id string) error {
	if id == "" || id == "." || id == ".." || len(id) > 128 {
		return ErrBadSubID
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._~-", c) >= 0) {
			return ErrBadSubID
		}
	}
	return nil
}

func badSub(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadSubscription, fmt.Sprintf(format, args...))
}
