package httpd

import (
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/model"
	"github.com/dsd-project/dsd/subs"
)

// The reserved __ds routes (base protocol §6-§7, D1, D10): JWKS, subscription CRUD,
// explicit links, and the delivery actions (callback, claim, ack, release), on both
// surfaces: /v1/stream/__ds/... is the compat bucket's namespace, /{bucket}/__ds/... that
// bucket's; /__ds/jwks.json at the root is an alias of the key set.

// SubscriptionStore is what the __ds routes need from storage (*engine.Engine).
type SubscriptionStore interface {
	PutSubscription(key subs.Key, c engine.SubscriptionCreate) (engine.SubscriptionDoc, bool, error)
	SubscriptionDocument(key subs.Key) (engine.SubscriptionDoc, error)
	DeleteSubscription(key subs.Key) error
	AddSubscriptionStreams(key subs.Key, paths []string) error
	RemoveSubscriptionStream(key subs.Key, path string) error
}

// SubscriptionWorker is what the __ds routes need from the delivery worker (*subs.Worker).
type SubscriptionWorker interface {
	SubscriptionChanged(key subs.Key)
	Callback(ctx context.Context, key subs.Key, bearer string, req subs.AckRequest) (subs.AckReply, error)
	Claim(ctx context.Context, key subs.Key, worker string) (subs.ClaimReply, error)
	Ack(ctx context.Context, key subs.Key, bearer string, req subs.AckRequest) (subs.AckReply, error)
	Release(ctx context.Context, key subs.Key, bearer string, req subs.ReleaseRequest) error
	JWKS() []byte
	KeyID() string
}

var _ SubscriptionStore = (*engine.Engine)(nil)

// ErrWebhooksOff refuses type webhook unless dsd runs with --webhooks (D10).
var ErrWebhooksOff = &model.Error{Code: "INVALID_REQUEST", Msg: "webhook subscriptions are disabled on this server (start dsd with --webhooks)"}

// ErrNotJSONBody is a __ds body without Content-Type application/json.
var ErrNotJSONBody = &model.Error{Code: "INVALID_REQUEST", Msg: "the request body must be application/json"}

// subRoute is a parsed path under {root}__ds/.
type subRoute struct {
	action string // "jwks", "subscription", "streams", "stream", "callback", "claim", "ack", "release"
	id     string
	path   string // the stream path of DELETE .../streams/{path}
}

// parseSubRoute classifies the escaped rest of a path after __ds/. Errors:
// model.ErrRouteNotFound, model.ErrBadSubID.
func parseSubRoute(rest string) (subRoute, error) {
	segs := strings.Split(rest, "/")
	if len(segs) == 1 && segs[0] == "jwks.json" {
		return subRoute{action: "jwks"}, nil
	}
	if len(segs) < 2 || segs[0] != "subscriptions" {
		return subRoute{}, model.ErrRouteNotFound
	}
	id, err := url.PathUnescape(segs[1])
	if err != nil {
		return subRoute{}, model.ErrRouteNotFound
	}
	if err := model.CheckSubscriptionID(id); err != nil {
		return subRoute{}, err
	}
	r := subRoute{id: id}
	switch {
	case len(segs) == 2:
		r.action = "subscription"
	case len(segs) == 3 && segs[2] == "streams":
		r.action = "streams"
	case len(segs) > 3 && segs[2] == "streams":
		parts := make([]string, 0, len(segs)-3)
		for _, s := range segs[3:] {
			p, err := url.PathUnescape(s)
			if err != nil {
				return subRoute{}, model.ErrRouteNotFound
			}
			parts = append(parts, p)
		}
		r.action, r.path = "stream", strings.Trim(strings.Join(parts, "/"), "/")
	case len(segs) == 3 && (segs[2] == "callback" || segs[2] == "claim" || segs[2] == "ack" || segs[2] == "release"):
		r.action = segs[2]
	default:
		return subRoute{}, model.ErrRouteNotFound
	}
	return r, nil
}

// subMethods are the methods of each route, for 405 and Allow.
var subMethods = map[string]string{
	"jwks": "GET, HEAD", "subscription": "GET, PUT, DELETE", "streams": "POST", "stream": "DELETE",
	"callback": "POST", "claim": "POST", "ack": "POST", "release": "POST",
}

// ownToken reports whether a request authenticates itself: callback, ack and release carry
// the subscription's token, and the JWKS is public (D10); --auth-tokens does not apply.
func (h *Handler) ownToken(r *http.Request) bool {
	t, err := h.parseTarget(r.URL.EscapedPath())
	if err != nil || t.kind != tReserved {
		return false
	}
	sr, err := parseSubRoute(t.param)
	if err != nil {
		return false
	}
	switch sr.action {
	case "callback", "ack", "release":
		return r.Method == http.MethodPost
	case "jwks":
		return r.Method == http.MethodGet || r.Method == http.MethodHead
	}
	return false
}

// reserved serves {root}__ds/... (B-6-01). Without a delivery worker it answers 501 as
// before subscriptions existed.
func (h *Handler) reserved(w http.ResponseWriter, r *http.Request, t target) error {
	if h.cfg.Subscriptions == nil || h.subStore == nil {
		return model.ErrNotImplemented
	}
	sr, err := parseSubRoute(t.param)
	if err != nil {
		return err
	}
	if t.bucket == "" && sr.action != "jwks" {
		return model.ErrRouteNotFound
	}
	fn := h.subHandler(sr.action, r.Method)
	if fn == nil {
		w.Header().Set("Allow", subMethods[sr.action])
		return model.ErrMethodNotAllowed
	}
	return fn(w, r, t, sr)
}

type subHandlerFunc func(w http.ResponseWriter, r *http.Request, t target, sr subRoute) error

func (h *Handler) subHandler(action, method string) subHandlerFunc {
	switch action + " " + method {
	case "jwks GET", "jwks HEAD":
		return h.jwks
	case "subscription PUT":
		return h.putSubscription
	case "subscription GET":
		return h.getSubscription
	case "subscription DELETE":
		return h.deleteSubscription
	case "streams POST":
		return h.addSubStreams
	case "stream DELETE":
		return h.removeSubStream
	case "callback POST":
		return h.subCallback
	case "claim POST":
		return h.subClaim
	case "ack POST":
		return h.subAck
	case "release POST":
		return h.subRelease
	}
	return nil
}

// jwks serves the public signing keys (base protocol §6.5, B-6-08).
func (h *Handler) jwks(w http.ResponseWriter, r *http.Request, _ target, _ subRoute) error {
	b := h.cfg.Subscriptions.JWKS()
	hd := w.Header()
	hd.Set("Content-Type", "application/jwk-set+json")
	hd.Set("Cache-Control", "public, max-age=300")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(b)
	}
	return nil
}

// subRoot is the absolute URL of the surface root the request came in on: --public-url (or
// the request's origin) then /v1/stream/ or /{bucket}/ (D10).
func (h *Handler) subRoot(r *http.Request, t target) string {
	origin := strings.TrimSuffix(h.cfg.PublicURL, "/")
	if origin == "" {
		origin = strings.TrimSuffix(absoluteURL(r, ""), "/")
	}
	if t.flat {
		return origin + flatPrefix
	}
	return origin + "/" + t.bucket + "/"
}

// readJSONBody reads a __ds request body and decodes it into v. Errors: ErrNotJSONBody,
// model.ErrTooLarge, model.ErrBadSubscription (not JSON).
func (h *Handler) readJSONBody(w http.ResponseWriter, r *http.Request, v any) ([]byte, error) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return nil, ErrNotJSONBody
	}
	body, done, err := h.readBody(w, r, h.cfg.MaxBody, nil)
	defer done()
	if err != nil {
		return nil, err
	}
	if v != nil {
		if err := json.Unmarshal(body, v); err != nil {
			return nil, fmt.Errorf("%w: %v", model.ErrBadSubscription, err)
		}
	}
	return body, nil
}

// putSubscription creates (201) or re-confirms (200) a subscription (base protocol §6.2,
// B-6-03, B-6-04): webhook URLs pass the static SSRF check, webhooks need --webhooks.
func (h *Handler) putSubscription(w http.ResponseWriter, r *http.Request, t target, sr subRoute) error {
	body, err := h.readJSONBody(w, r, nil)
	if err != nil {
		return err
	}
	cfg, err := model.ParseSubscription(body)
	if err != nil {
		return err
	}
	if cfg.Type == model.SubWebhook {
		if !h.cfg.Webhooks {
			return ErrWebhooksOff
		}
		if err := subs.CheckWebhookURL(cfg.WebhookURL, h.cfg.WebhookAllowLoopback); err != nil {
			return err
		}
	}
	key := subs.Key{Bucket: t.bucket, ID: sr.id}
	root := h.subRoot(r, t)
	doc, created, err := h.subStore.PutSubscription(key, engine.SubscriptionCreate{Config: cfg,
		JWKSURL: root + "__ds/jwks.json", CallbackURL: root + "__ds/subscriptions/" + url.PathEscape(sr.id) + "/callback"})
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
		h.cfg.Subscriptions.SubscriptionChanged(key)
	}
	return writeJSON(w, r, status, h.subDocument(doc))
}

// getSubscription serves the subscription document (base protocol §6.3, B-6-06).
func (h *Handler) getSubscription(w http.ResponseWriter, r *http.Request, t target, sr subRoute) error {
	doc, err := h.subStore.SubscriptionDocument(subs.Key{Bucket: t.bucket, ID: sr.id})
	if err != nil {
		return err
	}
	return writeJSON(w, r, http.StatusOK, h.subDocument(doc))
}

// deleteSubscription tombstones a subscription: 204 whether or not it existed (B-6-06).
func (h *Handler) deleteSubscription(w http.ResponseWriter, r *http.Request, t target, sr subRoute) error {
	key := subs.Key{Bucket: t.bucket, ID: sr.id}
	if err := h.subStore.DeleteSubscription(key); err != nil {
		return err
	}
	h.cfg.Subscriptions.SubscriptionChanged(key)
	return noContent(w)
}

// addSubStreams links streams explicitly (base protocol §6.4, B-6-07).
func (h *Handler) addSubStreams(w http.ResponseWriter, r *http.Request, t target, sr subRoute) error {
	var req struct {
		Streams []string `json:"streams"`
	}
	if _, err := h.readJSONBody(w, r, &req); err != nil {
		return err
	}
	paths, err := model.NormalizeStreamPaths(req.Streams)
	if err != nil {
		return err
	}
	key := subs.Key{Bucket: t.bucket, ID: sr.id}
	if err := h.subStore.AddSubscriptionStreams(key, paths); err != nil {
		return err
	}
	h.cfg.Subscriptions.SubscriptionChanged(key)
	return noContent(w)
}

// removeSubStream removes an explicit link; idempotent (base protocol §6.4, B-6-07).
func (h *Handler) removeSubStream(w http.ResponseWriter, r *http.Request, t target, sr subRoute) error {
	key := subs.Key{Bucket: t.bucket, ID: sr.id}
	if err := h.subStore.RemoveSubscriptionStream(key, sr.path); err != nil {
		return err
	}
	h.cfg.Subscriptions.SubscriptionChanged(key)
	return noContent(w)
}

// noContent answers 204 with Cache-Control: no-store.
func noContent(w http.ResponseWriter) error {
	w.Header().Set("Cache-Control", ccNoStore)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// ackBody is the JSON of callback and ack (base protocol §7.1, §7.2).
type ackBody struct {
	WakeID     string `json:"wake_id"`
	Generation uint64 `json:"generation"`
	Acks       []struct {
		Stream string `json:"stream"`
		Offset string `json:"offset"`
	} `json:"acks"`
	Done bool `json:"done"`
}

// ackRequest reads a callback or ack body. Errors: ErrNotJSONBody, model.ErrBadSubscription,
// ErrBadOffsetToken (an offset that is not a D2 token, naming the ack).
func (h *Handler) ackRequest(w http.ResponseWriter, r *http.Request) (subs.AckRequest, error) {
	var b ackBody
	if _, err := h.readJSONBody(w, r, &b); err != nil {
		return subs.AckRequest{}, err
	}
	req := subs.AckRequest{WakeID: b.WakeID, Generation: b.Generation, Done: b.Done, Acks: []subs.AckMove{}}
	for i, a := range b.Acks {
		o, err := model.ParseOffset(a.Offset)
		if err != nil {
			return req, fmt.Errorf("%w: acks[%d].offset %q", ErrBadOffsetToken, i, a.Offset)
		}
		req.Acks = append(req.Acks, subs.AckMove{Path: strings.Trim(a.Stream, "/"), Offset: o})
	}
	return req, nil
}

// bearer is the token of an Authorization: Bearer header ("" when absent).
func bearer(r *http.Request) string {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(tok)
}

// ackReply renders exactly {"ok":true,"next_wake":bool} (base protocol §7.1).
func ackReply(w http.ResponseWriter, r *http.Request, rep subs.AckReply) error {
	return writeJSON(w, r, http.StatusOK, struct {
		OK       bool `json:"ok"`
		NextWake bool `json:"next_wake"`
	}{true, rep.NextWake})
}

// subCallback acknowledges a webhook wake (base protocol §7.1, B-7-04, B-7-06).
func (h *Handler) subCallback(w http.ResponseWriter, r *http.Request, t target, sr subRoute) error {
	req, err := h.ackRequest(w, r)
	if err != nil {
		return err
	}
	rep, err := h.cfg.Subscriptions.Callback(r.Context(), subs.Key{Bucket: t.bucket, ID: sr.id}, bearer(r), req)
	if err != nil {
		return err
	}
	return ackReply(w, r, rep)
}

// subClaim claims a pull-wake lease (base protocol §7.2, B-7-05).
func (h *Handler) subClaim(w http.ResponseWriter, r *http.Request, t target, sr subRoute) error {
	var b struct {
		Worker string `json:"worker"`
	}
	if _, err := h.readJSONBody(w, r, &b); err != nil {
		return err
	}
	if b.Worker == "" {
		return fmt.Errorf("%w: claim needs a worker name", model.ErrBadSubscription)
	}
	rep, err := h.cfg.Subscriptions.Claim(r.Context(), subs.Key{Bucket: t.bucket, ID: sr.id}, b.Worker)
	if err != nil {
		return err
	}
	return writeJSON(w, r, http.StatusOK, rep)
}

// subAck heartbeats or completes a claimed pull-wake (base protocol §7.2, B-7-05).
func (h *Handler) subAck(w http.ResponseWriter, r *http.Request, t target, sr subRoute) error {
	req, err := h.ackRequest(w, r)
	if err != nil {
		return err
	}
	rep, err := h.cfg.Subscriptions.Ack(r.Context(), subs.Key{Bucket: t.bucket, ID: sr.id}, bearer(r), req)
	if err != nil {
		return err
	}
	return ackReply(w, r, rep)
}

// subRelease gives a claimed pull-wake back without acking: 204 (base protocol §7.2).
func (h *Handler) subRelease(w http.ResponseWriter, r *http.Request, t target, sr subRoute) error {
	var b struct {
		WakeID     string `json:"wake_id"`
		Generation uint64 `json:"generation"`
	}
	if _, err := h.readJSONBody(w, r, &b); err != nil {
		return err
	}
	err := h.cfg.Subscriptions.Release(r.Context(), subs.Key{Bucket: t.bucket, ID: sr.id}, bearer(r),
		subs.ReleaseRequest{WakeID: b.WakeID, Generation: b.Generation})
	if err != nil {
		return err
	}
	return noContent(w)
}

// subLink is one entry of a document's streams (base protocol §6.3).
type subLink struct {
	Path        string `json:"path"`
	LinkType    string `json:"link_type"`
	AckedOffset string `json:"acked_offset"`
}

// subDocument renders the document of base protocol §6.3: absent pattern, wake_stream,
// description and webhook as null, offsets as D2 tokens, never a secret.
func (h *Handler) subDocument(d engine.SubscriptionDoc) map[string]any {
	links := make([]subLink, 0, len(d.Links))
	for _, l := range d.Links {
		links = append(links, subLink{Path: l.Path, LinkType: l.LinkType, AckedOffset: l.Acked.String()})
	}
	c := d.Config
	doc := map[string]any{
		"id": d.Key.ID, "subscription_id": d.Key.ID, "type": c.Type, "pattern": nullable(c.Pattern),
		"streams": links, "webhook": nil, "wake_stream": nullable(c.WakeStream),
		"lease_ttl_ms": c.LeaseTTLMs, "status": string(d.Status), "description": c.Description,
		"created_at": time.UnixMilli(d.CreatedMs).UTC().Format("2006-01-02T15:04:05.000Z07:00"),
	}
	if c.Type == model.SubWebhook {
		doc["webhook"] = map[string]any{"url": c.WebhookURL,
			"signing": map[string]string{"alg": "ed25519", "kid": h.cfg.Subscriptions.KeyID(), "jwks_url": d.JWKSURL}}
	}
	return doc
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
