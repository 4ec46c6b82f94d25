package model

import (
	"strings"
	"testing"
)

// Flat-surface names: the whole path is the name (D1 amended).
func TestCheckFlatName(t *testing.T) {
	ok := []string{"a", "a/b/c", "events/sync-1", "a..b", "x/streams", "é/ü",
		strings.Repeat("x", MaxFlatNameBytes), "__dsx/a", "a/__ds"}
	bad := []string{"", "/a", "a/", "a//b", ".", "a/./b", "..", "a/../b", "__ds", "__ds/x",
		"streams", "a\x00b", "\xff", strings.Repeat("x", MaxFlatNameBytes+1)}
	for _, n := range ok {
		if err := CheckFlatName(n); err != nil {
			t.Errorf("CheckFlatName(%q) = %v, want nil", n, err)
		}
	}
	for _, n := range bad {
		if err := CheckFlatName(n); err != ErrBadFlatName {
			t.Errorf("CheckFlatName(%q) = %v, want ErrBadFlatName", n, err)
		}
	}
}

// Bucketed stream ids (extension §1.1) and dsd's '.' refusal: a dot segment is removed by
// clients and proxies, so /{bucket}/. would name the bucket.
func TestCheckStreamID(t *testing.T) {
	ok := []string{"a", ".a", "a.", ".x.", "é", "__dsx", strings.Repeat("x", MaxStreamKeyBytes-4)}
	bad := []string{"", ".", "..", "a..b", "a/b", "a\x00b", "\xff", "streams", strings.Repeat("x", MaxStreamKeyBytes-3)}
	for _, n := range ok {
		if err := CheckStreamID("bkt", n); err != nil {
			t.Errorf("CheckStreamID(bkt, %q) = %v, want nil", n, err)
		}
	}
	for _, n := range bad {
		if err := CheckStreamID("bkt", n); err != ErrBadStreamID {
			t.Errorf("CheckStreamID(bkt, %q) = %v, want ErrBadStreamID", n, err)
		}
	}
}

// Bucket ids: ^[a-z0-9_-]{4,64}$ (extension §1.1), and never the reserved __ds (B-6-01).
func TestCheckBucketID(t *testing.T) {
	for id, want := range map[string]error{
		"abcd": nil, "a_b-": nil, "__dsx": nil, "x__ds": nil, strings.Repeat("a", 64): nil,
		"abc": ErrBadBucketID, "ABCD": ErrBadBucketID, "a.bc": ErrBadBucketID, strings.Repeat("a", 65): ErrBadBucketID,
		"__ds": ErrReservedBucketID,
	} {
		if err := CheckBucketID(id); err != want {
			t.Errorf("CheckBucketID(%q) = %v, want %v", id, err, want)
		}
		if ValidBucketID(id) != (want == nil) {
			t.Errorf("ValidBucketID(%q) = %v", id, want != nil)
		}
	}
}
