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
