// Package subs is the subscription delivery worker (base protocol §6-§7, DESIGN.md D10,
// design/subscriptions.md 5.4-5.6): it POSTs signed webhooks, writes pull-wake events, and
// serves callback / claim / ack / release with leases and generation fencing.
//
// The worker and the model: every wake, lease, claim, ack, release and backoff decision is
// a transition of model.SubMachine (model/subscription_machine.go, subscription_routes.go),
// the machine the linearizability checker holds the server to. The worker only supplies
// inputs (the Store's State and Links, the clock, wake ids, jitter, webhook outcomes) and
// performs the resulting model.SubDecision: one Store Commit per decision with the new
// State, its cursor moves and, for an issued pull-wake wake, its event (WakeEventFailed
// when the wake stream refuses it); a webhook POST when AttemptDue; a step at NextDueMs.
// State is the machine in the Store's encoding (state.go). What the worker adds is
// plumbing the model leaves out: tokens (401s), SSRF guards, HTTP, scheduling, one attempt
// in flight per subscription, and the volatile lease of a heartbeat (KeepLease; Restart
// after a restart). TestWorkerFollowsTheModel runs the worker beside a sequential oracle of
// the same machine on random schedules and fails on any divergence.
//
// The worker keeps only a mirror that it rebuilds from Store at every decision.
//
// Imports: model and the standard library only, so engine/ may implement Store with these
// types (no cycle) or httpd/cmd may adapt it.
//
// Concurrency: all decisions about one subscription are taken under that subscription's
// mutex, in the order they are made; Commit is called under it, so a Store sees at most one
// Commit per subscription at a time.
package subs

import (
	"context"
	"net/netip"
	"time"

	"github.com/dsd-project/dsd/model"
)

// Key names one subscription: the bucket ("" is not special; the flat surface uses the
// compat bucket's id) and the client-chosen subscription id.
type Key struct {
	Bucket string
	ID     string
}

// Type is a subscription's delivery type (PROTOCOL §6.2).
type Type string

// The two delivery types.
const (
	Webhook  Type = "webhook"
	PullWake Type = "pull-wake"
)

// Status is a subscription's document status (PROTOCOL §6.3).
type Status string

// Statuses: failed while a webhook retry (or a wake-stream append retry) is scheduled.
const (
	Active Status = "active"
	Failed Status = "failed"
)

// Link types of a cursor (PROTOCOL §6.1).
const (
	LinkGlob     = model.LinkGlob
	LinkExplicit = model.LinkExplicit
)

// Subscription is what the worker needs of one live (not tombstoned) subscription: its
// configuration, as stored at PUT, and its durable delivery State.
type Subscription struct {
	Key         Key
	Incarnation uint64 // random per PUT that created it; a re-created id has a new one
	Type        Type
	Pattern     string   // glob over bucket-local paths; "" when none
	Streams     []string // every explicit link path (PUT's plus POST /streams'), to route StreamChanged
	WebhookURL  string   // webhook only; already passed CheckWebhookURL at PUT
	WakeStream  string   // pull-wake only; bucket-local path of the wake stream
	LeaseTTL    time.Duration
	CallbackURL string // absolute URL of {root}__ds/subscriptions/{id}/callback (webhook)
	State       State
}

// State is the durable delivery state of a subscription: model.SubMachine (without its
// links, which the Store derives) in the Store's encoding. The worker computes every new
// State as a model transition; the Store persists it verbatim, e.g. as its JSON (the tags
// below; times are UTC, millisecond precision).
type State struct {
	Generation uint64 `json:"generation"`       // of the latest wake issued; 0 before the first; never decreases
	Status     Status `json:"status,omitempty"` // "" reads as Active
	Retry      Retry  `json:"retry"`
	Wake       *Wake  `json:"wake,omitempty"` // the outstanding wake, nil when idle
}

// Retry is the persisted retry schedule (PROTOCOL §7.1 MUST: honoured after a restart).
// Count is the number of consecutive failed attempts (0 after a success); NextAttemptAt is
// the earliest time of the next attempt (zero: at once). It survives wake changes: lease
// expiry never bypasses the backoff (D10).
type Retry struct {
	Count         int       `json:"count"`
	NextAttemptAt time.Time `json:"next_attempt_at"`
	LastError     string    `json:"last_error,omitempty"` // short reason of the last failure, for operators
}

// Wake is an outstanding wake (PROTOCOL §7), model.SubWake in the Store's encoding.
// Snapshot is fixed at issue: retries resend it (same wake_id, generation, streams, token),
// and a webhook's {"done":true} acks exactly its Tail offsets.
type Wake struct {
	ID         string       `json:"id"`         // "w_" + 24 lowercase hex digits
	Generation uint64       `json:"generation"` // equals State.Generation while outstanding
	IssuedAt   time.Time    `json:"issued_at"`
	Trigger    string       `json:"trigger"`          // the pending path that caused it (the pull-wake event's "stream")
	Snapshot   []StreamInfo `json:"snapshot"`         // pending links only, at most MaxSnapshot
	Holder     string       `json:"holder,omitempty"` // pull-wake: the claiming worker, "" unclaimed; webhook: ""
	// LeaseUntil: webhook from issue, pull-wake from claim; zero while unclaimed. After a
	// restart the worker restarts every running lease in full (design 5.3).
	LeaseUntil time.Time `json:"lease_until"`
	// Delivered: a webhook POST of this wake got a 2xx without done; no further attempt.
	Delivered bool `json:"delivered,omitempty"`
}

// StreamInfo is one stream of a wake snapshot and payload (PROTOCOL §7.1 streams[]): path,
// link type, cursor (inclusive ack position) and the tail when the wake was issued.
type StreamInfo = model.SubLink

// MaxSnapshot bounds a wake's snapshot and payload (design 5.4); the rest stays pending.
const MaxSnapshot = model.MaxWakeSnapshot

// Link is one linked stream as the Store derives it now: explicit link records ∪ streams
// matching the pattern (design 5.3). Acked is the cursor of the current incarnation (its
// start when never acked); Tail the published tail, equal to Acked for a link whose stream
// is absent. Pending work is Tail > Acked.
type Link = model.SubLink

// AckMove moves one cursor to Offset (inclusive). In a Change the worker has checked it
// against Links: linked, not below the cursor, not past the tail.
type AckMove = model.SubAck

// WakeEvent is a pull-wake event to append to the subscription's wake stream (PROTOCOL §7.2):
// Body is the compact JSON {"type":"wake","subscription_id","stream","generation","ts"}; the
// Store appends it like any append (a JSON stream gets one message; other content types the
// body plus "\n").
type WakeEvent struct {
	Stream string // bucket-local path of the wake stream
	Body   []byte
}

// Change is one decision to persist, in ONE transaction (D10): the new State, any cursor
// moves, and any wake event. All or nothing. One Change may end a wake, move cursors and
// issue the next wake with its event at once (a done ack with work remaining). An AckMove
// of a glob-derived link without a record creates the record at the stream's current
// incarnation.
type Change struct {
	Key         Key
	Incarnation uint64 // must equal the stored one, else ErrNotFound and nothing is written
	State       State
	Acks        []AckMove
	Event       *WakeEvent // nil: none
}

// Store is what the worker needs from the engine. Methods may be called from several
// goroutines (never two Commits for the same Key at once). Errors other than the sentinels
// below are storage failures (the routes answer 503).
type Store interface {
	// Subscriptions lists every live subscription of every bucket with its State. Called by
	// Start to derive pending work; a tombstoned subscription is not listed.
	Subscriptions(ctx context.Context) ([]Subscription, error)
	// Subscription returns one live subscription. Errors: ErrNotFound (unknown or tombstoned).
	Subscription(ctx context.Context, key Key) (Subscription, error)
	// Links returns the subscription's current links (any order; the worker sorts by Path),
	// never including its own wake stream. Errors: ErrNotFound.
	Links(ctx context.Context, key Key) ([]Link, error)
	// Commit persists c atomically and is durable (fsynced) when it returns nil. Errors:
	// ErrNotFound (unknown, tombstoned or other incarnation: nothing written); ErrWakeStream
	// (c.Event could not be appended: the stream is missing, closed or deleted; nothing
	// written). After a commit with an Event the Store publishes the append to readers.
	Commit(ctx context.Context, c Change) error
	KeyStore
}

// KeyStore persists the signing keys and the token key (design 5.4: "system/sign_keys",
// "system/token_key"), so the JWKS, every kid and every issued token survive a restart.
type KeyStore interface {
	// LoadKeys returns the stored keys; the zero Keys (no error) when none were saved yet.
	LoadKeys(ctx context.Context) (Keys, error)
	// SaveKeys replaces the stored keys durably.
	SaveKeys(ctx context.Context, k Keys) error
}

// Keys is the persisted key material. Private: never served, logged or returned by a route.
type Keys struct {
	Signing  []SigningKey `json:"signing"`
	TokenKey []byte       `json:"token_key"` // 32 random bytes, HMAC-SHA256 key of callback and claim tokens
}

// SigningKey is one Ed25519 key. The kid is derived from the public key (KeyID).
type SigningKey struct {
	Seed    []byte    `json:"seed"`    // ed25519.SeedSize (32) bytes
	Created time.Time `json:"created"` // UTC
	Retired time.Time `json:"retired"` // zero while active; published until Retired + 5 min
}

// Sentinel errors of Store. Claim also returns ErrWakeStream (suggested status: 409).
var (
	ErrNotFound   = &model.Error{Code: "SUBSCRIPTION_NOT_FOUND", Msg: "subscription not found"}
	ErrWakeStream = &model.Error{Code: "WAKE_STREAM_UNAVAILABLE", Msg: "the wake stream is missing, closed or deleted"}
)

// Clock is the worker's time source; tests inject a fake one.
type Clock interface {
	Now() time.Time
	// At returns a channel that receives once Now() >= t (at once when t has passed). An
	// absolute time, so a clock that jumps between Now and At loses no wake-up.
	At(t time.Time) <-chan time.Time
}

// Options configure a Worker. Zero values take the defaults in brackets.
type Options struct {
	Store         Store
	Clock         Clock          // [the system clock]
	Jitter        func() float64 // uniform in [0,1), for the ±20 % backoff jitter [math/rand/v2]
	AllowLoopback bool           // the development exception (--webhook-allow-loopback) [false]
	Timeout       time.Duration  // per webhook attempt, connect to body read [10 s]
	Concurrency   int            // webhook attempts in flight, all subscriptions [8]
	TokenTTL      time.Duration  // callback and claim token lifetime [1 h]
	// Resolve maps a host name to addresses for webhook dials [net.DefaultResolver]; every
	// address is checked again at connect time (net.Dialer.Control).
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)

	onConnect func(netip.AddrPort) // tests: every address the dial guard let through
}

// API of *Worker (the delivery worker). Create with New, then Start; Stop on shutdown.
//
//	New(Options) (*Worker, error)
//	(*Worker).Start(ctx) error   loads (or creates and saves) keys, loads Subscriptions,
//	                             schedules every due wake, attempt and lease expiry
//	(*Worker).Stop(ctx) error    stops issuing; waits for attempts in flight until ctx ends
//
// Notifications (call after the change committed and was published; they never block):
//
//	(*Worker).StreamChanged(bucket, path string)  a stream's tail moved, it was created with
//	                                              data, or deleted
//	(*Worker).SubscriptionChanged(key Key)        PUT, DELETE, links added or removed
//
// Routes (each returns *model.Error values below, or a storage error → 503):
//
//	(*Worker).Callback(ctx, key, bearer, AckRequest) (AckReply, error)   webhook only
//	(*Worker).Claim(ctx, key, worker string) (ClaimReply, error)         pull-wake only
//	(*Worker).Ack(ctx, key, bearer, AckRequest) (AckReply, error)        pull-wake only
//	(*Worker).Release(ctx, key, bearer, ReleaseRequest) error            pull-wake only
//	(*Worker).JWKS() []byte, (*Worker).KeyID() string                   signing keys
//	CheckWebhookURL(raw string, allowLoopback bool) error               at PUT
//
// bearer is the token of the Authorization header without the "Bearer " prefix ("" when the
// header is absent: TOKEN_INVALID). StreamChanged routes by Pattern (glob rules as
// model.MatchGlob) and Streams; unknown keys are loaded from Store on demand, so a missed
// notification only delays work until the next one or the next Start. Documents read
// status (State.Status, "" = active) and cursors from the Store; webhook.signing.kid is
// KeyID(). The Worker type itself is in worker.go.

// AckRequest is the body of callback and ack (PROTOCOL §7.1, §7.2).
// The routes decode the JSON and fill it; an absent acks member is an empty slice.
type AckRequest struct {
	WakeID     string
	Generation uint64
	Acks       []AckMove // Path = the ack's "stream" (normalized), Offset parsed per D2
	Done       bool
}

// AckReply is the 200 body {"ok":true,"next_wake":bool}; the routes render exactly that.
type AckReply struct {
	NextWake bool
}

// ReleaseRequest is the body of release (PROTOCOL §7.2); the reply is 204.
type ReleaseRequest struct {
	WakeID     string
	Generation uint64
}

// ClaimReply is the 200 body of claim (PROTOCOL §7.2):
// {wake_id, generation, token, streams:[{path,link_type,acked_offset,tail_offset,
// has_pending}], lease_ttl_ms}; MarshalJSON renders it.
type ClaimReply struct {
	WakeID     string
	Generation uint64
	Token      string
	Streams    []StreamInfo
	LeaseTTL   time.Duration
}

// Errors of the route functions (D7 codes; httpd/errors.go maps them to statuses:
// SUBSCRIPTION_NOT_FOUND 404, INVALID_REQUEST 400, WEBHOOK_URL_REJECTED 400, TOKEN_INVALID
// and TOKEN_EXPIRED 401, FENCED / ALREADY_CLAIMED / NO_PENDING_WORK / INVALID_OFFSET 409).
// ALREADY_CLAIMED comes as *ClaimedError (errors.Is(err, ErrAlreadyClaimed)), whose Holder
// and Generation go inside the error object as current_holder and generation.
var (
	ErrWrongType      = &model.Error{Code: "INVALID_REQUEST", Msg: "this action does not apply to the subscription's type"}
	ErrTokenInvalid   = &model.Error{Code: "TOKEN_INVALID", Msg: "the bearer token is missing, malformed or not for this subscription"}
	ErrTokenExpired   = &model.Error{Code: "TOKEN_EXPIRED", Msg: "the bearer token has expired"}
	ErrFenced         = model.ErrSubFenced // the model's (model/subscription_machine.go)
	ErrAlreadyClaimed = model.ErrSubClaimed
	ErrNoPendingWork  = model.ErrSubNoPendingWork
	ErrAckOffset      = model.ErrSubAckOffset
	ErrURLRejected    = &model.Error{Code: "WEBHOOK_URL_REJECTED", Msg: "webhook URL rejected"}
	ErrBadWorker      = &model.Error{Code: "INVALID_REQUEST", Msg: "claim needs a non-empty worker name"}
)

// AllErrors lists every error value of this package, for the test that keeps httpd's status
// table complete (as model.AllErrors).
var AllErrors = []error{
	ErrNotFound, ErrWakeStream, ErrWrongType, ErrTokenInvalid, ErrTokenExpired, ErrFenced,
	ErrAlreadyClaimed, &ClaimedError{}, ErrNoPendingWork, ErrAckOffset, ErrURLRejected, ErrBadWorker,
}

// ClaimedError is ALREADY_CLAIMED with the current holder and generation.
type ClaimedError struct {
	Holder     string
	Generation uint64
}

func (e *ClaimedError) Error() string { return ErrAlreadyClaimed.Msg + " (" + e.Holder + ")" }

// Unwrap makes errors.Is(err, ErrAlreadyClaimed) and errors.As(err, **model.Error) work.
func (e *ClaimedError) Unwrap() error { return ErrAlreadyClaimed }
