package storagetest

import (
	"slices"
	"testing"

	"github.com/dsd-project/dsd/engine/storage"
)

// testBucketIDs: BucketIDs pages through the committed buckets in byte order, strictly
// after the cursor, and leaves deleted ones out.
func testBucketIDs(t *testing.T, h Harness) {
	b, _ := open(t, h)
	for _, id := range []string{"bk-c", "bk-a", "bk-b", "bk-gone"} {
		commit(t, b, storage.Change{Bucket: &storage.BucketPut{ID: id, Record: &storage.BucketRecord{CreatedMs: 1}}})
	}
	commit(t, b, storage.Change{Bucket: &storage.BucketPut{ID: "bk-gone"}})
	for _, tc := range []struct {
		after string
		limit int
		want  []string
	}{
		{"", 10, []string{"bk-a", "bk-b", "bk-c"}},
		{"", 2, []string{"bk-a", "bk-b"}},
		{"bk-a", 10, []string{"bk-b", "bk-c"}},
		{"bk-b0", 10, []string{"bk-c"}},
		{"bk-c", 10, nil},
	} {
		got, err := b.BucketIDs(tc.after, tc.limit)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("BucketIDs(%q, %d) = %q, %v; want %q", tc.after, tc.limit, got, err, tc.want)
		}
	}
}
