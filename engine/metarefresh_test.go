package engine

import (
	"testing"
	"time"
)

// An append rewrites the stored meta of a stream without a TTL once its stored last write
// time is metaRefreshIdleMs old (only that time lags, tail and record tail are derived on
// load), of one with a sliding TTL once its stored access time is metaRefreshMs old (its
// expiry reads the stored access time after a restart), also as the first append after a
// creation or a load; a listing shows a loaded stream's own last write time,
// not the stored one. A clean shutdown and an unload write a lagging meta first, so the
// listed last write time stays exact after either.
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
	stored := func(name string) int64 {
		t.Helper()
		sm, err := te.st.Stream(key(name).String())
		if err != nil || sm == nil {
			t.Fatalf("stored meta of %s: %v %v", name, sm, err)
		}
		return sm.LastWriteMs
	}
	appendBoth := func() int64 {
		t.Helper()
		te.clk.advance(2 * time.Second)
		te.mustAppend("plain", "text/plain", "x")
		te.mustAppend("ttl", "text/plain", "x")
		return te.clk.now().UnixMilli()
	}
	want := func(when string, ms int64) {
		t.Helper()
		if got := lastWrites(); got["plain"] != ms || got["ttl"] != ms {
			t.Fatalf("%s: listed last writes %v, want both %d", when, got, ms)
		}
	}
	created := te.clk.now().UnixMilli()
	appendBoth()
	second := appendBoth()
	want("loaded", second)
	if p, s := stored("plain"), stored("ttl"); p != created || s != second {
		t.Fatalf("stored after 4 s: last writes plain %d, ttl %d; want %d (not rewritten), %d", p, s, created, second)
	}
	te.reopen()
	want("after a clean restart", second)

	appendBoth()
	fourth := appendBoth()
	if p := stored("plain"); p != second {
		t.Fatalf("stored after a restart and 4 s: plain's last write %d, want %d (not rewritten)", p, second)
	}
	if n := te.evictAll(); n != 2 || te.loaded() != 0 {
		t.Fatalf("evicted %d, %d still loaded; want 2 and 0", n, te.loaded())
	}
	want("after an unload", fourth)
	if p := stored("plain"); p != fourth {
		t.Fatalf("stored after an unload: plain's last write %d, want %d", p, fourth)
	}
	if _, err := te.Head(key("plain")); err != nil { // reloads it: its stored meta is current
		t.Fatal(err)
	}
	if lsn := te.queuedLSN(); te.evictAll() != 1 || te.queuedLSN() != lsn {
		t.Fatalf("unloading a freshly loaded stream queued ops %d..%d, want none", lsn, te.queuedLSN())
	}

	appendBoth()
	te.clk.advance(time.Duration(metaRefreshIdleMs) * time.Millisecond)
	last := appendBoth()
	if p, s := stored("plain"), stored("ttl"); p != last || s != last {
		t.Fatalf("stored after %d ms: last writes plain %d, ttl %d; want both %d", metaRefreshIdleMs, p, s, last)
	}
	want("loaded", last)
}

// queuedLSN returns the lsn of the op queued last.
func (te *testEngine) queuedLSN() uint64 {
	te.q.mu.Lock()
	defer te.q.mu.Unlock()
	return te.q.lsn
}
