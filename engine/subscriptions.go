package engine

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/dsd-project/dsd/engine/storage"
	"github.com/dsd-project/dsd/model"
	"github.com/dsd-project/dsd/subs"
)

// Subscriptions (base protocol §6-§7, D10, design/subscriptions.md 5.3). Every change is
// one op on the commit queue, in the transaction of what it describes; e.subsMu orders the
// decisions (each reads the committed records and waits for its own op before the next
// decision), so records are never read ahead of their commit. Links are derived: explicit
// link records ∪ the bucket's streams matching the pattern; a cursor counts only for the
// stream incarnation it was written for, else the incarnation's start (0, or a fork's
// anchor): a stream created after the subscription is pending from its first append.

// SubscriptionCreate is a PUT {root}__ds/subscriptions/{id}: the normalized config and the
// absolute URLs the documents and deliveries name (D10: --public-url or the request).
type SubscriptionCreate struct {
	Config      model.SubscriptionConfig
	CallbackURL string
	JWKSURL     string
}

// SubscriptionDoc is what GET shows of a live subscription (base protocol §6.3).
type SubscriptionDoc struct {
	Key         subs.Key
	Config      model.SubscriptionConfig
	CreatedMs   int64
	Status      subs.Status
	JWKSURL     string
	CallbackURL string
	Links       []subs.Link // sorted by path
}

var _ subs.Store = (*Engine)(nil)

// SetStreamObserver registers fn, called by the committer (queue.go) after every published
// change of a stream (create, append, close, delete, ...) with its bucket and bucket-local
// name. fn must not block (the delivery worker's StreamChanged only marks work).
func (e *Engine) SetStreamObserver(fn func(bucket, stream string)) { e.observer.Store(&fn) }

func notifyStream(fn func(bucket, stream string), key string) {
	if bucket, stream, ok := strings.Cut(key, "/"); ok {
		fn(bucket, stream)
	}
}

// PutSubscription creates subscription key (201: created true), re-confirms an identical
// live one (200: created false, nothing written) or refuses a different one. A tombstoned id
// gets a new incarnation whose generation continues. Explicit streams and existing pattern
// matches are linked at their current tails in the same transaction (B-6-05). Errors:
// model.ErrBucketNotFound, model.ErrSubExists, storage errors.
func (e *Engine) PutSubscription(key subs.Key, c SubscriptionCreate) (SubscriptionDoc, bool, error) {
	if _, err := e.Bucket(key.Bucket); err != nil {
		return SubscriptionDoc{}, false, err
	}
	e.subsMu.Lock()
	defer e.subsMu.Unlock()
	prev, err := e.subRecord(key)
	if err != nil {
		return SubscriptionDoc{}, false, err
	}
	hash := c.Config.Hash()
	if prev.live() {
		if prev.Hash != hash {
			return SubscriptionDoc{}, false, model.ErrSubExists
		}
		doc, err := e.subDoc(key, prev)
		return doc, false, err
	}
	rec := &subRecord{Config: c.Config, Hash: hash, CreatedMs: e.now().UnixMilli(),
		Incarnation: randomIncarnation(), CallbackURL: c.CallbackURL, JWKSURL: c.JWKSURL,
		State: subs.State{Status: subs.Active}}
	if prev != nil {
		rec.State.Generation = prev.State.Generation
	}
	links := e.initialLinks(key.Bucket, c.Config)
	puts := []storage.KVPut{deleteLinks(key)}
	for p, l := range links {
		puts = append(puts, putLink(key, p, l))
	}
	err = e.subsWrite(append(puts, putSub(key, rec))...)
	if err != nil {
		return SubscriptionDoc{}, false, err
	}
	doc, err := e.subDoc(key, rec)
	return doc, true, err
}

// initialLinks are the link records of a new subscription: explicit streams and existing
// pattern matches at their current tails (an absent explicit stream at sid 0, position 0).
func (e *Engine) initialLinks(bucket string, c model.SubscriptionConfig) map[string]linkRecord {
	out := map[string]linkRecord{}
	if c.Pattern != "" {
		for _, p := range e.matchingStreams(bucket, c.Pattern) {
			if pos, ok := e.streamPos(bucket, p); ok && p != c.WakeStream {
				out[p] = linkRecord{SID: pos.sid, Acked: pos.tail}
			}
		}
	}
	for _, p := range c.Streams {
		l := linkRecord{Explicit: true}
		if pos, ok := e.streamPos(bucket, p); ok {
			l.SID, l.Acked = pos.sid, pos.tail
		}
		out[p] = l
	}
	return out
}

// Subscription document of a live subscription. Errors: subs.ErrNotFound.
func (e *Engine) SubscriptionDocument(key subs.Key) (SubscriptionDoc, error) {
	rec, err := e.subRecord(key)
	if err != nil {
		return SubscriptionDoc{}, err
	}
	if !rec.live() {
		return SubscriptionDoc{}, subs.ErrNotFound
	}
	return e.subDoc(key, rec)
}

func (e *Engine) subDoc(key subs.Key, rec *subRecord) (SubscriptionDoc, error) {
	links, err := e.Links(context.Background(), key)
	if err != nil {
		return SubscriptionDoc{}, err
	}
	slices.SortFunc(links, func(a, b subs.Link) int { return strings.Compare(a.Path, b.Path) })
	st := rec.State.Status
	if st == "" {
		st = subs.Active
	}
	return SubscriptionDoc{Key: key, Config: rec.Config, CreatedMs: rec.CreatedMs, Status: st,
		JWKSURL: rec.JWKSURL, CallbackURL: rec.CallbackURL, Links: links}, nil
}

// DeleteSubscription tombstones a live subscription (base protocol §6.3): its links go,
// its generation stays for a later re-creation, and later callbacks find nothing. Deleting
// an unknown or tombstoned id changes nothing. Errors: storage errors.
func (e *Engine) DeleteSubscription(key subs.Key) error {
	e.subsMu.Lock()
	defer e.subsMu.Unlock()
	rec, err := e.subRecord(key)
	if err != nil || !rec.live() {
		return err
	}
	rec.DeletedMs = e.now().UnixMilli()
	rec.State.Wake = nil
	return e.subsWrite(deleteLinks(key), putSub(key, rec))
}

// AddSubscriptionStreams links paths explicitly (base protocol §6.4): a new link starts at
// the stream's current tail; an existing link keeps its cursor. Errors: subs.ErrNotFound,
// model.ErrBadSubscription (the subscription's own wake stream), storage errors.
func (e *Engine) AddSubscriptionStreams(key subs.Key, paths []string) error {
	e.subsMu.Lock()
	defer e.subsMu.Unlock()
	rec, links, err := e.liveSub(key)
	if err != nil {
		return err
	}
	if slices.Contains(paths, rec.Config.WakeStream) {
		return model.ErrBadSubscription
	}
	changed := map[string]linkRecord{}
	for _, p := range paths {
		l, ok := links[p]
		if !ok {
			if pos, exists := e.streamPos(key.Bucket, p); exists {
				l.SID, l.Acked = pos.sid, pos.tail
			}
		}
		if !l.Explicit || !ok {
			l.Explicit = true
			changed[p] = l
		}
	}
	if len(changed) == 0 {
		return nil
	}
	var puts []storage.KVPut
	for p, l := range changed {
		puts = append(puts, putLink(key, p, l))
	}
	return e.subsWrite(puts...)
}

// RemoveSubscriptionStream removes an explicit link (base protocol §6.4); a glob link to
// the same stream stays while the pattern matches it. Absent links change nothing.
// Errors: subs.ErrNotFound, storage errors.
func (e *Engine) RemoveSubscriptionStream(key subs.Key, path string) error {
	e.subsMu.Lock()
	defer e.subsMu.Unlock()
	rec, links, err := e.liveSub(key)
	if err != nil {
		return err
	}
	l, ok := links[path]
	if !ok || !l.Explicit {
		return nil
	}
	keepGlob := rec.Config.Pattern != "" && model.MatchGlob(rec.Config.Pattern, path)
	if keepGlob {
		l.Explicit = false
		return e.subsWrite(putLink(key, path, l))
	}
	return e.subsWrite(deleteLink(key, path))
}

// liveSub reads a live subscription and its link records. Errors: subs.ErrNotFound.
func (e *Engine) liveSub(key subs.Key) (*subRecord, map[string]linkRecord, error) {
	rec, err := e.getSub(key)
	if err != nil {
		return nil, nil, err
	}
	if !rec.live() {
		return nil, nil, subs.ErrNotFound
	}
	links, err := e.getLinks(key)
	return rec, links, err
}

// subRecord reads a subscription record, live or not (nil when absent).
func (e *Engine) subRecord(key subs.Key) (*subRecord, error) { return e.getSub(key) }

// streamPosition is a visible stream incarnation: its sid, its published tail and the start
// its links count from (0, or a fork's anchor: inherited data is not new to the fork).
type streamPosition struct {
	sid, tail, start uint64
}

// streamPos returns the visible incarnation at bucket/path (false: none).
func (e *Engine) streamPos(bucket, path string) (streamPosition, bool) {
	s, err := e.lookup(model.StreamKey{Bucket: bucket, Stream: path}.String())
	if err != nil || s == nil {
		return streamPosition{}, false
	}
	v := s.view()
	if v == nil || v.SoftDeleted {
		return streamPosition{}, false
	}
	p := streamPosition{sid: s.sid, tail: v.Tail}
	if v.Fork != nil {
		p.start = v.Fork.Anchor
	}
	return p, true
}

// matchingStreams lists the bucket's stream names that match pattern.
func (e *Engine) matchingStreams(bucket, pattern string) []string {
	names, _ := e.streamNames(bucket, model.GlobLiteralPrefix(pattern))
	out := names[:0]
	for _, n := range names {
		if model.MatchGlob(pattern, n) {
			out = append(out, n)
		}
	}
	return out
}

func randomIncarnation() uint64 {
	var b [8]byte
	for {
		_, _ = rand.Read(b[:])
		if v := binary.BigEndian.Uint64(b[:]); v != 0 {
			return v
		}
	}
}

// The subs.Store implementation.

// Subscriptions lists every live subscription (subs.Store).
func (e *Engine) Subscriptions(ctx context.Context) ([]subs.Subscription, error) {
	var out []subs.Subscription
	err := e.forEachSub(func(k subs.Key, r *subRecord) error {
		if !r.live() {
			return nil
		}
		links, err := e.getLinks(k)
		if err != nil {
			return err
		}
		out = append(out, toSubscription(k, r, links))
		return nil
	})
	return out, err
}

// Subscription returns one live subscription (subs.Store). Errors: subs.ErrNotFound.
func (e *Engine) Subscription(ctx context.Context, key subs.Key) (subs.Subscription, error) {
	rec, links, err := e.liveSub(key)
	if err != nil {
		return subs.Subscription{}, err
	}
	return toSubscription(key, rec, links), nil
}

func toSubscription(k subs.Key, r *subRecord, links map[string]linkRecord) subs.Subscription {
	var explicit []string
	for p, l := range links {
		if l.Explicit {
			explicit = append(explicit, p)
		}
	}
	slices.Sort(explicit)
	c := r.Config
	return subs.Subscription{Key: k, Incarnation: r.Incarnation, Type: subs.Type(c.Type),
		Pattern: c.Pattern, Streams: explicit, WebhookURL: c.WebhookURL, WakeStream: c.WakeStream,
		LeaseTTL: time.Duration(c.LeaseTTLMs) * time.Millisecond, CallbackURL: r.CallbackURL,
		State: r.State}
}

// Links derives a live subscription's links now (subs.Store): explicit records ∪ pattern
// matches, minus its wake stream. Errors: subs.ErrNotFound.
func (e *Engine) Links(ctx context.Context, key subs.Key) ([]subs.Link, error) {
	rec, recs, err := e.liveSub(key)
	if err != nil {
		return nil, err
	}
	types := map[string]string{}
	if rec.Config.Pattern != "" {
		for _, p := range e.matchingStreams(key.Bucket, rec.Config.Pattern) {
			types[p] = subs.LinkGlob
		}
	}
	for p, l := range recs {
		if l.Explicit {
			types[p] = subs.LinkExplicit
		}
	}
	delete(types, rec.Config.WakeStream)
	out := make([]subs.Link, 0, len(types))
	for p, lt := range types {
		out = append(out, e.link(key.Bucket, p, lt, recs))
	}
	return out, nil
}

// link derives one link: the record's cursor when it belongs to the visible incarnation,
// else that incarnation's start; an absent stream has nothing pending.
func (e *Engine) link(bucket, path, linkType string, recs map[string]linkRecord) subs.Link {
	l := subs.Link{Path: path, LinkType: linkType}
	r, hasRec := recs[path]
	pos, ok := e.streamPos(bucket, path)
	switch {
	case !ok:
		l.Acked = model.Offset(r.Acked)
		l.Tail = l.Acked
		return l
	case hasRec && r.SID == pos.sid:
		l.Acked = model.Offset(r.Acked)
	default:
		l.Acked = model.Offset(pos.start)
	}
	l.Tail = model.Offset(max(pos.tail, uint64(l.Acked)))
	return l
}

// Commit persists one decision of the delivery worker in one transaction (subs.Store): the
// State, the cursor moves, and the pull-wake event appended to the wake stream like any
// append. Errors: subs.ErrNotFound (not live, or another incarnation), subs.ErrWakeStream,
// storage errors.
func (e *Engine) Commit(ctx context.Context, c subs.Change) error {
	e.subsMu.Lock()
	defer e.subsMu.Unlock()
	rec, recs, err := e.liveSub(c.Key)
	if err != nil {
		return err
	}
	if rec.Incarnation != c.Incarnation {
		return subs.ErrNotFound
	}
	rec.State = c.State
	moved := map[string]linkRecord{}
	for _, a := range c.Acks {
		l := recs[a.Path]
		l.SID, l.Acked = 0, uint64(a.Offset)
		if pos, ok := e.streamPos(c.Key.Bucket, a.Path); ok {
			l.SID = pos.sid
		}
		moved[a.Path] = l
	}
	var puts []storage.KVPut
	for p, l := range moved {
		puts = append(puts, putLink(c.Key, p, l))
	}
	puts = append(puts, putSub(c.Key, rec))
	if c.Event == nil {
		return e.subsWrite(puts...)
	}
	return e.appendWakeEvent(model.StreamKey{Bucket: c.Key.Bucket, Stream: c.Event.Stream}, c.Event.Body, puts)
}

// appendWakeEvent appends a pull-wake event to the wake stream with also in the same
// transaction (base protocol §7.2; D10): a JSON stream gets one message, any other the
// body and a newline. Errors: subs.ErrWakeStream (missing, deleted, closed), storage errors.
func (e *Engine) appendWakeEvent(key model.StreamKey, body []byte, also []storage.KVPut) error {
	s, err := e.lookup(key.String())
	if err != nil {
		return err
	}
	v := (*streamMeta)(nil)
	if s != nil {
		v = s.view()
	}
	if v == nil {
		return subs.ErrWakeStream
	}
	if !s.isJSON {
		body = append(append([]byte(nil), body...), '\n')
	}
	_, err = e.Append(key, AppendRequest{MediaType: v.MediaType, Body: body, also: also})
	var closed *model.ClosedError
	switch {
	case errors.Is(err, model.ErrStreamNotFound), errors.Is(err, model.ErrStreamGone),
		errors.As(err, &closed), errors.Is(err, model.ErrContentTypeMismatch):
		return subs.ErrWakeStream
	}
	return err
}

// LoadKeys returns the stored signing and token keys (subs.KeyStore).
func (e *Engine) LoadKeys(ctx context.Context) (subs.Keys, error) {
	return e.getSignKeys()
}

// SaveKeys replaces the stored keys durably (subs.KeyStore).
func (e *Engine) SaveKeys(ctx context.Context, k subs.Keys) error {
	return e.subsWrite(putSignKeys(k))
}
