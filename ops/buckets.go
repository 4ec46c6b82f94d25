package ops

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/model"
)

// ReadAccess reports which buckets a request may read, ok false when it must be refused
// 401 (httpd.Handler.ReadAccess).
type ReadAccess func(r *http.Request) (canRead func(bucket string) bool, ok bool)

// listedBucket is one entry of GET /buckets: the fields of GET /{bucket} (extension §1.3).
type listedBucket struct {
	BucketID    string `json:"bucket_id"`
	Streams     int    `json:"streams"`
	CreatedAtMs int64  `json:"created_at_ms"`
}

// bucketPage is the body of GET /buckets.
type bucketPage struct {
	Buckets    []listedBucket `json:"buckets"`
	HasMore    bool           `json:"has_more"`
	NextCursor *string        `json:"next_cursor"`
}

// HandleBuckets serves GET /buckets?after=ID&limit=N on the admin listener (D12): the
// buckets the request's token may read, by id, strictly after after, at most limit
// (1..1000, default 100), as {"buckets": [{"bucket_id", "streams", "created_at_ms"}],
// "has_more", "next_cursor"} (the cursor is the next page's after). The protocol has no
// list-all-buckets; the console's landing page reads this. 400 for a bad limit, 401
// without a valid token when tokens are configured, 503 before the data file is open.
func (a *Admin) HandleBuckets(access ReadAccess) {
	a.mux.HandleFunc("GET /buckets", func(w http.ResponseWriter, r *http.Request) {
		canRead, ok := access(r)
		if !ok {
			refuseUnauthorized(w, r)
			return
		}
		limit, err := bucketLimit(r.URL.Query().Get("limit"))
		if err != nil {
			refuse(w, r, err)
			return
		}
		e := a.eng.Load()
		if e == nil {
			writeStatus(w, http.StatusServiceUnavailable, "starting", "the data file is being opened")
			return
		}
		page, err := listReadable(e, r.URL.Query().Get("after"), limit, canRead)
		if err != nil {
			writeStatus(w, http.StatusServiceUnavailable, "storage_error", err.Error())
			return
		}
		writeBody(w, page)
	})
}

// bucketLimit parses the limit parameter: 1..1000, default 100.
func bucketLimit(s string) (int, error) {
	if s == "" {
		return 100, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 1000 || s != strconv.Itoa(n) {
		return 0, errBadLimit
	}
	return n, nil
}

var errBadLimit = detailed(model.ErrBadQuery, "limit must be an integer from 1 to 1000 (default 100)")

// listReadable pages through the engine's buckets until limit readable ones are found.
func listReadable(e *engine.Engine, after string, limit int, canRead func(string) bool) (bucketPage, error) {
	page := bucketPage{Buckets: []listedBucket{}}
	for {
		l, err := e.ListBuckets(after, limit)
		if err != nil {
			return page, err
		}
		for _, b := range l.Buckets {
			if !canRead(b.ID) {
				continue
			}
			if len(page.Buckets) == limit {
				page.HasMore = true
				page.NextCursor = &page.Buckets[limit-1].BucketID
				return page, nil
			}
			page.Buckets = append(page.Buckets, listedBucket{BucketID: b.ID, Streams: b.Streams, CreatedAtMs: b.CreatedAt})
		}
		if !l.HasMore {
			return page, nil
		}
		after = l.NextCursor
	}
}

// writeBody writes v as a 200 JSON body, never cached.
func writeBody(w http.ResponseWriter, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(append(b, '\n'))
}

// refuseUnauthorized answers 401 naming the header a request needs.
func refuseUnauthorized(w http.ResponseWriter, r *http.Request) {
	refuse(w, r, detailed(model.ErrUnauthorized, "a bearer token is required (Authorization: Bearer TOKEN)"))
}
