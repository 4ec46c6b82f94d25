package engine

import (
	"errors"

	"github.com/dsd-project/dsd/model"
)

// BucketList is a page of the bucket listing, sorted by id. NextCursor is the last id
// returned when HasMore.
type BucketList struct {
	Buckets    []BucketInfo
	HasMore    bool
	NextCursor string
}

// ListBuckets lists buckets by id strictly after after, at most limit (1..1000), each as
// Bucket returns it (live stream count, creation time). The protocol has no such listing;
// the admin listener's GET /buckets serves it (D12). Errors: storage errors.
func (e *Engine) ListBuckets(after string, limit int) (BucketList, error) {
	limit = min(max(limit, 1), 1000)
	var out BucketList
	for {
		ids, err := e.storedBucketIDs(after, limit+1-len(out.Buckets))
		if err != nil || len(ids) == 0 {
			return out, err
		}
		for _, id := range ids {
			if len(out.Buckets) == limit {
				out.HasMore, out.NextCursor = true, out.Buckets[limit-1].ID
				return out, nil
			}
			info, err := e.Bucket(id)
			if errors.Is(err, model.ErrBucketNotFound) {
				continue // deleted since the scan
			}
			if err != nil {
				return out, err
			}
			out.Buckets = append(out.Buckets, info)
		}
		after = ids[len(ids)-1]
	}
}

// storedBucketIDs returns up to n committed bucket ids strictly after after, in order.
func (e *Engine) storedBucketIDs(after string, n int) ([]string, error) {
	return e.st.BucketIDs(after, n)
}
