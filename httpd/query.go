package httpd

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/dsd-project/dsd/model"
)

// liveMode is the live query parameter (B-5.7, B-5.8).
type liveMode uint8

const (
	liveNone liveMode = iota
	liveLongPoll
	liveSSE
)

// readQuery is a parsed stream GET query. Unknown parameters are ignored (B-3-02).
type readQuery struct {
	from      model.OffsetSpec
	hasOffset bool
	offsetRaw string // as given, for the ETag; "-1" when omitted
	live      liveMode
	cursor    string
	timeout   time.Duration // timeout_ms (D6); 0 = server default
}

// parseReadQuery parses offset, live, cursor and timeout_ms. Errors: ErrBadOffset
// (malformed or repeated offset), ErrBadLive, ErrLiveNeedsOffset, ErrBadQuery.
func parseReadQuery(r *http.Request) (readQuery, url.Values, error) {
	v := r.URL.Query()
	q := readQuery{offsetRaw: "-1"}
	if offs, ok := v["offset"]; ok {
		if len(offs) != 1 {
			return q, v, model.ErrBadOffset
		}
		spec, err := model.ParseOffsetSpec(offs[0])
		if err != nil {
			return q, v, err
		}
		q.from, q.hasOffset, q.offsetRaw = spec, true, offs[0]
	}
	if l, ok := v["live"]; ok {
		switch l[0] {
		case "long-poll":
			q.live = liveLongPoll
		case "sse":
			q.live = liveSSE
		default:
			return q, v, model.ErrBadLive
		}
		if !q.hasOffset {
			return q, v, model.ErrLiveNeedsOffset
		}
	}
	if c, ok := v["cursor"]; ok {
		q.cursor = c[0]
	}
	if t, ok := v["timeout_ms"]; ok {
		n, err := strconv.ParseInt(t[0], 10, 64)
		if err != nil {
			return q, v, model.ErrBadQuery
		}
		q.timeout = time.Duration(min(max(n, 1), 60000)) * time.Millisecond
	}
	return q, v, nil
}
