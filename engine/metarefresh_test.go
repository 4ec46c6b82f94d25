package engine

import (
	"testing"
	"time"
)

// An append rewrites the stored meta of a stream without a TTL at most every
// metaRefreshIdleMs (only the last write time lags, tail and record tail are derived on
// load), of one with a sliding TTL every metaRefreshMs (its expiry reads the stored
// access time after a restart); a listing shows a loaded stream's own last write time,
// not the stored one.
func TestAppendMetaRefresh(t *testing.T) {
	te := newTestEngine(t)
	te.mustCreate("plain", "text/plain", "")
	ttl := uint64(3600)
	if _, err := te.Create(key("ttl"), CreateRequest{ContentType: "text/plain", MediaType: "text/plain", TTL: &ttl}); err != nil {
		t.Fatal(err)
	}
	lastWrites := func() map[string]int64 {
		t.Helper()
		l, err := te.ListStreams("test", ListQuery{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int64{}
		for _, s := range l.Streams {
			out[s.StreamID] = s.LastWriteMs
		}
		return out
	}
	appendBoth := func() int64 {
		t.Helper()
		te.clk.advance(2 * time.Second)
		te.mustAppend("plain", "text/plain", "x")
		te.mustAppend("ttl", "text/plain", "x")
		return te.clk.now().UnixMilli()
	}
	first := appendBoth() // the first append after the load writes the meta
	second := appendBoth()
	if got := lastWrites(); got["plain"] != second || got["ttl"] != second {
		t.Fatalf("loaded: listed last writes %v, want both %d", got, second)
	}
	te.reopen()
	if got := lastWrites(); got["plain"] != first || got["ttl"] != second {
		t.Fatalf("stored after 2 s: last writes %v, want plain %d (not rewritten), ttl %d", got, first, second)
	}
	appendBoth()
	te.clk.advance(time.Duration(metaRefreshIdleMs) * time.Millisecond)
	last := appendBoth()
	te.reopen()
	if got := lastWrites(); got["plain"] != last || got["ttl"] != last {
		t.Fatalf("stored after %d ms: last writes %v, want both %d", metaRefreshIdleMs, got, last)
	}
}
