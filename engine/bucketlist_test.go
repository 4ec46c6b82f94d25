package engine

import (
	"slices"
	"testing"

	"github.com/dsd-project/dsd/model"
)

// ListBuckets pages through every bucket in id order with live stream counts, skips
// deleted buckets and survives a reopen.
func TestListBuckets(t *testing.T) {
	te := newTestEngine(t) // has bucket "test"
	for _, id := range []string{"bkt-b", "bkt-a", "bkt-c", "gone"} {
		if _, err := te.CreateBucket(id); err != nil {
			t.Fatal(err)
		}
	}
	if err := te.DeleteBucket("gone"); err != nil {
		t.Fatal(err)
	}
	te.mustCreate("s1", "text/plain", "")
	te.mustCreate("s2", "text/plain", "")
	te.reopen()

	var ids []string
	after, pages := "", 0
	for {
		page, err := te.ListBuckets(after, 2)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, b := range page.Buckets {
			ids = append(ids, b.ID)
			if want := map[string]int{"test": 2}[b.ID]; b.Streams != want {
				t.Errorf("bucket %s: %d streams, want %d", b.ID, b.Streams, want)
			}
			if b.CreatedAt == 0 {
				t.Errorf("bucket %s: no creation time", b.ID)
			}
		}
		if !page.HasMore {
			break
		}
		if page.NextCursor != ids[len(ids)-1] {
			t.Fatalf("next cursor %q, want the last id %q", page.NextCursor, ids[len(ids)-1])
		}
		after = page.NextCursor
	}
	if want := []string{"bkt-a", "bkt-b", "bkt-c", "test"}; !slices.Equal(ids, want) || pages != 2 {
		t.Fatalf("listed %v in %d pages, want %v in 2", ids, pages, want)
	}
}

// The reserved segment __ds is never a bucket (B-6-01): CreateBucket refuses it, so
// neither PUT /__ds nor --compat-bucket __ds can make one.
func TestCreateBucketRefusesReservedID(t *testing.T) {
	te := newTestEngine(t)
	if _, err := te.CreateBucket(model.ReservedSegment); err != model.ErrReservedBucketID {
		t.Fatalf("CreateBucket(__ds) = %v, want ErrReservedBucketID", err)
	}
	if _, err := te.Bucket(model.ReservedSegment); err != model.ErrReservedBucketID {
		t.Fatalf("Bucket(__ds) = %v, want ErrReservedBucketID", err)
	}
}
