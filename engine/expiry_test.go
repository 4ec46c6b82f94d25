package engine

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dsd-project/dsd/engine/boltstore"
	"github.com/dsd-project/dsd/engine/storage"
	"github.com/dsd-project/dsd/model"
)

// createTTL creates stream name of bucket "test" with a sliding TTL of ttl seconds.
func (te *testEngine) createTTL(name string, ttl uint64) {
	te.t.Helper()
	if _, err := te.Create(key(name), CreateRequest{ContentType: "text/plain", MediaType: "text/plain", TTL: &ttl}); err != nil {
		te.t.Fatal(err)
	}
}

// listed returns the stream ids of bucket "test"'s listing.
func (te *testEngine) listed() string {
	te.t.Helper()
	l, err := te.ListStreams("test", ListQuery{Limit: 1000})
	if err != nil {
		te.t.Fatal(err)
	}
	var out string
	for _, s := range l.Streams {
		out += s.StreamID + " "
	}
	return out
}

// Streams with a sliding TTL are unloaded like any other; the access time of a read
// before the unload (kept in memory only) still sets when they expire, in the listing,
// after the reload and in the sweep. Spec: A-14, B-5.1-04.
func TestEvictUnloadsSlidingTTLKeepingReadTimes(t *testing.T) {
	te := newTestEngine(t)
	te.createTTL("t", 60)
	te.clk.advance(30 * time.Second)
	te.readAll("t") // the window restarts at +30 s; the stored access time is +0 s
	if n := te.evictAll(); n != 1 || te.loaded() != 0 {
		t.Fatalf("evicted %d, %d loaded; want the TTL stream unloaded", n, te.loaded())
	}
	te.clk.advance(50 * time.Second) // +80 s: 50 s after the read
	if got := te.listed(); got != "t " {
		t.Fatalf("listing inside the window: %q", got)
	}
	te.expireStored()
	if _, err := te.Head(key("t")); err != nil {
		t.Fatalf("head inside the window after the unload: %v", err)
	}
	te.clk.advance(11 * time.Second) // 61 s after the read
	if _, err := te.Head(key("t")); !errors.Is(err, model.ErrStreamNotFound) {
		t.Fatalf("head after the window: %v", err)
	}
}

// A read that touches an incarnation unloaded under it hands its access time on to the
// next load. Spec: A-14.
func TestTouchOfAnEvictedIncarnationReachesTheReload(t *testing.T) {
	te := newTestEngine(t)
	te.createTTL("t", 60)
	s, _, err := te.readable(key("t"), false)
	if err != nil {
		t.Fatal(err)
	}
	te.evictAll()
	te.clk.advance(40 * time.Second)
	if _, err := te.viewOf(s, true); err != nil { // the reader got s before the unload
		t.Fatal(err)
	}
	te.clk.advance(40 * time.Second) // 80 s after the create, 40 s after that read
	if _, err := te.Head(key("t")); err != nil {
		t.Fatalf("head 40 s after a read of the unloaded incarnation: %v", err)
	}
}

// loadedLive counts the loaded streams not being deleted.
func (te *testEngine) loadedLive() int {
	te.mu.RLock()
	defer te.mu.RUnlock()
	n := 0
	for _, s := range te.byID {
		s.mu.Lock()
		if !s.deleted {
			n++
		}
		s.mu.Unlock()
	}
	return n
}

// namesCounter counts the scans of stored names.
type namesCounter struct {
	storage.Backend
	scans atomic.Int32
}

func (c *namesCounter) Names(prefix, seek string, visit func(string, *storage.Meta) bool) error {
	c.scans.Add(1)
	return c.Backend.Names(prefix, seek, visit)
}

// Once the expiry index is built (the first sweep's scan), a bucket's GET and the sweeps
// expire exactly the streams whose lifetime ended without scanning the bucket's names,
// loaded or not, and streams with a lifetime that have not expired stay unloaded.
// Spec: A-14, extension §1.3.
func TestBucketExpiresFromTheIndexWithoutScanning(t *testing.T) {
	fileOnly(t)
	te := &testEngine{t: t, dir: t.TempDir(), clk: &fakeClock{t: time.Unix(1_800_000_000, 0)}}
	st, err := boltstore.Open(te.dir, boltstore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	names := &namesCounter{Backend: st}
	if te.Engine, err = OpenBackend(names, Options{NoSync: true, Clock: te.clk.now, SweepInterval: time.Hour}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(te.closeAndCheck)
	if _, err := te.CreateBucket("test"); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		te.mustCreate(fmt.Sprint("plain", i), "text/plain", "")
	}
	te.createTTL("short", 10)
	te.createTTL("long", 100)
	te.expireStored() // builds the index from the stored streams
	te.createTTL("later", 10)
	at := te.clk.now().Add(5 * time.Second)
	if _, err := te.Create(key("abs"), CreateRequest{ContentType: "text/plain", MediaType: "text/plain", ExpiresAt: &at}); err != nil {
		t.Fatal(err)
	}
	te.evictAll()
	before := names.scans.Load()
	te.clk.advance(6 * time.Second)
	if b, err := te.Bucket("test"); err != nil || b.Streams != 23 {
		t.Fatalf("bucket after the expiry at +5 s: %+v %v, want 23 streams", b, err)
	}
	te.clk.advance(5 * time.Second)
	te.expireIndexed() // the sweep's pass
	if b, err := te.Bucket("test"); err != nil || b.Streams != 21 {
		t.Fatalf("bucket after the TTLs of 10 s: %+v %v, want 21 streams", b, err)
	}
	if got := names.scans.Load() - before; got != 0 {
		t.Fatalf("%d scans of names after the index was built", got)
	}
	if n := te.loadedLive(); n != 0 {
		t.Fatalf("%d live streams loaded; the long TTL's must not be", n)
	}
	if _, err := te.Head(key("long")); err != nil {
		t.Fatalf("head of the unexpired stream: %v", err)
	}
	te.clk.advance(90 * time.Second)
	if b, err := te.Bucket("test"); err != nil || b.Streams != 20 {
		t.Fatalf("bucket after the TTL of 100 s: %+v %v, want 20 streams", b, err)
	}
}

// indexSize returns how many streams the expiry index holds.
func (te *testEngine) indexSize() int {
	te.expiry.mu.Lock()
	defer te.expiry.mu.Unlock()
	return len(te.expiry.at)
}

// Deleting a stream drops its expiry index entry at once: streams created with a far
// Expires-At or a long TTL and deleted again (churn under the same or new names) leave
// the index holding only live streams, whatever their lifetimes. Spec: A-14.
func TestDeletedStreamsLeaveTheExpiryIndex(t *testing.T) {
	te := newTestEngine(t)
	at := te.clk.now().Add(365 * 24 * time.Hour)
	for i := range 50 {
		name := fmt.Sprint("s", i%5)
		if i%2 == 0 {
			te.createTTL(name, 86400)
		} else if _, err := te.Create(key(name), CreateRequest{ContentType: "text/plain", MediaType: "text/plain", ExpiresAt: &at}); err != nil {
			t.Fatal(err)
		}
		if i < 45 {
			if err := te.Delete(key(name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n := te.indexSize(); n != 5 {
		t.Fatalf("expiry index holds %d entries after 45 of 50 streams were deleted, want 5", n)
	}
	te.clk.advance(366 * 24 * time.Hour)
	te.expireIndexed()
	if b, err := te.Bucket("test"); err != nil || b.Streams != 0 || te.indexSize() != 0 {
		t.Fatalf("after every lifetime ended: %+v %v, index %d", b, err, te.indexSize())
	}
}
