// Package httpd is dsd's HTTP layer: it parses requests, calls the Store, and renders
// responses for the Durable Streams base protocol (docs/spec/base-protocol.md) and the
// extensions (docs/spec/extensions.txt), on the bucketed surface and on the flat
// /v1/stream/ compatibility surface (D1). Handlers never choose a status: errors are
// mapped once, in errors.go.
package httpd

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/dsd-project/dsd/model"
)

// Config tunes the HTTP layer.
type Config struct {
	// LongPollTimeout is how long a long-poll waits for data (D6; default 20s).
	LongPollTimeout time.Duration
	// SSEMaxAge ends SSE responses after this long (D6; default 60s).
	SSEMaxAge time.Duration
	// SSEKeepAlive is the keep-alive control event period while caught up (D6; 15s).
	SSEKeepAlive time.Duration
	// CompatBucket holds the streams of the /v1/stream/ surface; "" disables it (D1).
	CompatBucket string
	// MaxBody bounds request bodies in bytes (D5; default 32 MiB); larger is 413.
	MaxBody int64
	// BodyBudget bounds the bytes of request bodies held at once, over all requests
	// (issue 20; default 48 MiB, at least MaxBody; negative: no bound). A body that does
	// not fit gets 503 SERVER_BUSY with Retry-After.
	BodyBudget int64
	// BodyIdleTimeout is how long a request body may send no byte (default 10s); then
	// 408 BODY_TIMEOUT and the connection closes.
	BodyIdleTimeout time.Duration
	// BodyTimeout bounds the reading of one whole request body (default 5m).
	BodyTimeout time.Duration
	// LiveBufferBudget bounds the bytes held, over all connections, for reads whose
	// sockets do not take them (issue 20; default 64 MiB; negative: no bound). Past it the
	// writes blocked longest are cut and their connections reset.
	LiveBufferBudget int64
	// SSESendBuffer is the kernel send buffer (SO_SNDBUF) of SSE connections, bounding
	// what a subscriber that does not read pins in the kernel (default 128 KiB).
	SSESendBuffer int
	// AuthTokens, when non-empty, are bearer tokens granted everything (B-12-01); other
	// requests get 401. Setting them (or Tokens) implies CachePrivate.
	AuthTokens []string
	// Tokens, when set, are scoped bearer tokens (D12; ParseTokens): a request without a
	// listed token gets 401, one whose token lacks the scope it needs 403. It takes
	// precedence over AuthTokens; Handler.SetTokens replaces it.
	Tokens *Tokens
	// CachePrivate marks cacheable reads `private` instead of `public` (A-04's option,
	// B-10-01: private data) and adds `Vary: Authorization`.
	CachePrivate bool
	// Subscriptions is the delivery worker behind the __ds routes (base protocol §6-§7);
	// nil answers them 501. The Store must then implement SubscriptionStore.
	Subscriptions SubscriptionWorker
	// Webhooks allows type webhook subscriptions (--webhooks; D10: off by default).
	Webhooks bool
	// WebhookAllowLoopback admits http(s) webhook URLs to localhost, 127.0.0.0/8 and [::1]
	// (--webhook-allow-loopback; the development exception, off by default).
	WebhookAllowLoopback bool
	// PublicURL is the origin of absolute URLs in subscription documents and deliveries
	// (--public-url); empty: the creating request's scheme and Host.
	PublicURL string
}

func (c *Config) defaults() {
	if c.LongPollTimeout == 0 {
		c.LongPollTimeout = 20 * time.Second
	}
	if c.SSEMaxAge == 0 {
		c.SSEMaxAge = 60 * time.Second
	}
	if c.SSEKeepAlive == 0 {
		c.SSEKeepAlive = 15 * time.Second
	}
	if c.MaxBody == 0 {
		c.MaxBody = 32 << 20
	}
	if c.BodyBudget == 0 {
		c.BodyBudget = 48 << 20
	}
	if c.BodyBudget > 0 {
		// a body of MaxBody bytes must fit, in whole pieces
		c.BodyBudget = max(c.BodyBudget, (c.MaxBody/bodyPiece+1)*bodyPiece)
	}
	if c.LiveBufferBudget == 0 {
		c.LiveBufferBudget = 64 << 20
	}
	if c.SSESendBuffer == 0 {
		c.SSESendBuffer = 128 << 10
	}
	if c.BodyIdleTimeout == 0 {
		c.BodyIdleTimeout = 10 * time.Second
	}
	if c.BodyTimeout == 0 {
		c.BodyTimeout = 5 * time.Minute
	}
	if c.Tokens == nil && len(c.AuthTokens) > 0 {
		c.Tokens = TokensOf(c.AuthTokens)
	}
	if c.Tokens != nil {
		c.CachePrivate = true // a shared cache must never hold a protected read (B-12-01)
	}
}

// Handler serves the protocol over a Store.
type Handler struct {
	store    Store
	subStore SubscriptionStore // store's subscription methods (nil when it has none)
	cfg      Config
	router   *httprouter.Router
	streamFn streamRoutes // the stream's handlers, bound once (a method value per request allocates)
	now      func() time.Time
	hubs     hubSet
	bodies   byteBudget             // request body bytes held (Config.BodyBudget)
	stalls   stallSet               // bytes held by blocked response writes (Config.LiveBufferBudget)
	tokens   atomic.Pointer[Tokens] // nil: no authentication
}

// Shutdown ends every SSE response parked on a hijacked connection with its final chunk
// (http.Server.Shutdown does not track those), waiting at most 5 s for that. Call it
// before shutting the server down.
func (h *Handler) Shutdown() { h.hubs.close(5 * time.Second) }

// New returns the HTTP handler for store.
func New(store Store, cfg Config) *Handler {
	cfg.defaults()
	h := &Handler{store: store, cfg: cfg, now: time.Now, bodies: byteBudget{limit: cfg.BodyBudget},
		stalls: stallSet{limit: cfg.LiveBufferBudget, grace: stallGrace}}
	h.subStore, _ = store.(SubscriptionStore)
	if cfg.Tokens != nil {
		h.tokens.Store(cfg.Tokens)
	}
	h.streamFn = streamRoutes{append: h.append, read: h.read, head: h.head, create: h.create, delete: h.delete}
	h.router = h.newRouter()
	return h
}

// newRouter is httpd's router: one catch-all route per method (dispatch parses the path
// itself, D1), OPTIONS to the CORS preflight, and dsd's JSON errors for what matches no
// route. A handler's panic is answered as an internal error, except
// http.ErrAbortHandler, which net/http must see to cut the response (it must not look
// complete).
func (h *Handler) newRouter() *httprouter.Router {
	r := httprouter.New()
	r.RedirectTrailingSlash, r.RedirectFixedPath, r.HandleOPTIONS = false, false, false
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPut, http.MethodPost, http.MethodDelete} {
		r.Handle(m, "/*path", h.dispatch)
	}
	r.Handle(http.MethodOptions, "/*path", h.options)
	unrouted := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		writeError(w, req, methodOrRouteError(req))
	})
	r.NotFound, r.MethodNotAllowed = unrouted, unrouted
	r.PanicHandler = func(w http.ResponseWriter, req *http.Request, v any) {
		if v == http.ErrAbortHandler {
			panic(v)
		}
		writeError(w, req, fmt.Errorf("panic: %v", v))
	}
	return r
}

func methodOrRouteError(r *http.Request) error {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodPut, http.MethodPost,
		http.MethodDelete, http.MethodOptions:
		return model.ErrRouteNotFound
	}
	return model.ErrMethodNotAllowed
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	setCommonHeaders(w.Header(), r)
	r, err := h.authenticate(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodPut &&
		r.Method != http.MethodPost && r.Method != http.MethodDelete && r.Method != http.MethodOptions {
		w.Header().Set("Allow", "GET, HEAD, PUT, POST, DELETE, OPTIONS")
		writeError(w, r, model.ErrMethodNotAllowed)
		return
	}
	if h.cfg.CachePrivate {
		w.Header().Add("Vary", "Authorization")
	}
	if err := checkRequestSyntax(r); err != nil {
		writeError(w, r, err)
		return
	}
	if r, err = decodeRequestBody(r); err != nil {
		writeError(w, r, err)
		return
	}
	h.router.ServeHTTP(w, r)
}

// options answers CORS preflights.
func (h *Handler) options(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	hd := w.Header()
	hd.Set("Access-Control-Allow-Methods", "GET, HEAD, PUT, POST, DELETE, OPTIONS")
	hd.Set("Access-Control-Allow-Headers", corsAllowHeaders)
	hd.Set("Access-Control-Max-Age", "86400")
	hd.Set("Allow", "GET, HEAD, PUT, POST, DELETE, OPTIONS")
	w.WriteHeader(http.StatusNoContent)
}

// handlerFunc is the shape of every resource handler: it returns an error instead of
// choosing a status.
type handlerFunc func(w http.ResponseWriter, r *http.Request, t target) error

// dispatch routes a request by resource kind and method.
func (h *Handler) dispatch(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	t, err := h.parseTarget(r.URL.EscapedPath())
	if err == nil {
		err = admit(w, r, t)
	}
	w, finish := compressResponse(w, r, t, err)
	if err == nil {
		fn := h.route(t, r.Method)
		if fn == nil {
			w.Header().Set("Allow", allowed(t.kind))
			err = model.ErrMethodNotAllowed
		} else {
			if t.subResource() || (t.kind == tStream && r.Method == http.MethodDelete) {
				h.advertise(w.Header(), t) // before the handler: a DELETE ends the stream
			}
			if err = fn(w, r, t); err != nil && t.kind == tStream {
				h.advertise(w.Header(), t)
			}
		}
	}
	if err != nil {
		writeError(w, r, err)
	}
	finish() // not deferred: a handler's abort panic must not end the body cleanly
}
