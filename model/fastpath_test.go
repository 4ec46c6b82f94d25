package model

import (
	"fmt"
	"mime"
	"testing"
)

// The allocation-free paths of MediaType and Offset.String agree with the general ones.
func TestMediaTypeFastPathAgreesWithMime(t *testing.T) {
	for _, ct := range []string{"text/plain", "application/json", "application/vnd.api+json", "x-a.b/c-d",
		"Text/Plain", "text/plain; charset=utf-8", "text /plain", "text/", "/plain", "text", "a/b/c", "", "text/pl@in"} {
		got, err := MediaType(ct)
		mt, _, merr := mime.ParseMediaType(ct)
		want := mt
		if merr != nil && merr != mime.ErrInvalidMediaParameter {
			want = ""
		}
		if plainMediaType(ct) && (got != want || err != nil) {
			t.Errorf("MediaType(%q) = %q, %v; mime says %q", ct, got, err, want)
		}
		if !plainMediaType(ct) && err == nil && got != want {
			t.Errorf("MediaType(%q) = %q; mime says %q", ct, got, want)
		}
	}
	if plainMediaType("Text/Plain") || plainMediaType("text/plain;a=b") || !plainMediaType("text/plain") {
		t.Error("plainMediaType takes only bare lowercase type/subtype")
	}
}

func TestOffsetStringAgreesWithFormat(t *testing.T) {
	for _, o := range []Offset{0, 1, 100, MaxOffset, MaxOffset + 1, offsetBeyond} {
		want := fmt.Sprintf("0000000000000000_%016d", uint64(o))
		if o == offsetBeyond {
			want = "9999999999999999_9999999999999999"
		}
		if got := o.String(); got != want {
			t.Errorf("Offset(%d).String() = %q, want %q", uint64(o), got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = Offset(12345).String() }); n > 1 {
		t.Errorf("Offset.String allocates %v times, want 1", n)
	}
}
