package engine

import (
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dsd-project/dsd/model"
)

// lifeModel is the reference of one stream's lifetime: a sliding TTL (seconds) from the
// last access, or an absolute expiry (Unix ms).
type lifeModel struct {
	ttl     *uint64
	expires *int64
	access  int64
	readers []*Reader // open live readers: the stream never expires meanwhile
}

func (l *lifeModel) alive(now int64) bool {
	return len(l.readers) > 0 ||
		(l.expires == nil || now < *l.expires) && (l.ttl == nil || now <= l.access+int64(*l.ttl)*1000)
}

// closeReaders closes l's live readers at now; the sliding TTL restarts.
func (l *lifeModel) closeReaders(now int64) {
	for _, r := range l.readers {
		r.Close()
	}
	if len(l.readers) > 0 {
		l.access = now
	}
	l.readers = nil
}

// A bucket's stream count (from the expiry index once built) and its listing (a scan of
// the stored streams) agree with a reference model of A-14 on random sequences of
// creates (none, sliding TTL, Expires-At), reads, live readers, deletes, recreations
// under the same name, unloads, sweeps and restarts on a fake clock. Spec: A-14, extension §1.3, §1.4.
func TestExpiryIndexAgreesWithTheModel(t *testing.T) {
	for seed := int64(1); seed <= 16; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { checkExpirySequence(t, seed) })
	}
}

func checkExpirySequence(t *testing.T, seed int64) {
	te := newTestEngine(t)
	r := rand.New(rand.NewSource(seed))
	live := map[string]*lifeModel{}
	names := []string{"a", "b", "c", "d", "e", "f"}
	nowMs := func() int64 { return te.clk.now().UnixMilli() }
	for step := 0; step < 400; step++ {
		name := names[r.Intn(len(names))]
		l, ok := live[name]
		if ok && !l.alive(nowMs()) {
			delete(live, name)
			ok = false
		}
		var what string
		switch k := r.Intn(22); {
		case k < 5:
			what = "create " + name
			if ok {
				break
			}
			l = &lifeModel{access: nowMs()}
			req := CreateRequest{ContentType: "text/plain", MediaType: "text/plain"}
			switch r.Intn(3) {
			case 1:
				ttl := uint64(1 + r.Intn(8))
				l.ttl, req.TTL = &ttl, &ttl
			case 2:
				at := te.clk.now().Add(time.Duration(1+r.Intn(8000)) * time.Millisecond)
				ms := at.UnixMilli()
				l.expires, req.ExpiresAt = &ms, &at
			}
			if _, err := te.Create(key(name), req); err != nil {
				t.Fatalf("seed %d step %d: create %s: %v", seed, step, name, err)
			}
			live[name] = l
		case k < 9:
			what = "read " + name
			_, err := te.Read(key(name), ReadRequest{From: model.OffsetSpec{Kind: model.SpecStart}, MaxBytes: 1 << 20})
			if expectLive(t, fmt.Sprintf("seed %d step %d: %s", seed, step, what), ok, err) {
				l.access = nowMs()
			}
		case k < 10:
			what = "delete " + name
			if ok {
				if err := te.Delete(key(name)); err != nil {
					t.Fatalf("seed %d step %d: delete %s: %v", seed, step, name, err)
				}
				l.closeReaders(nowMs())
				delete(live, name)
			}
		case k < 15:
			d := time.Duration(r.Intn(3000)) * time.Millisecond
			what = "advance " + d.String()
			te.clk.advance(d)
		case k < 17:
			what = "evict"
			te.evictAll()
		case k < 19:
			what = "sweep"
			te.expireLoaded()
			if te.expiry.complete() {
				te.expireIndexed()
			} else {
				te.expireStored()
			}
		case k == 20:
			what = "open reader " + name
			rd, _, err := te.OpenReader(key(name))
			if expectLive(t, fmt.Sprintf("seed %d step %d: %s", seed, step, what), ok, err) {
				l.access = nowMs()
				l.readers = append(l.readers, rd)
			}
		case k == 21:
			what = "close readers " + name
			if ok {
				l.closeReaders(nowMs())
			}
		default:
			what = "reopen"
			for _, l := range live {
				l.closeReaders(nowMs())
			}
			te.reopen()
			for n, l := range live {
				if !l.alive(nowMs()) {
					delete(live, n)
				}
				l.access = nowMs() // every window restarts
			}
			if r.Intn(2) == 0 {
				te.expireStored()
			}
		}
		checkAgainstModel(t, te, live, fmt.Sprintf("seed %d step %d after %s", seed, step, what))
	}
}

// expectLive fails t unless a request's err is nil on a live stream (ok) and
// model.ErrStreamNotFound on a gone one; it returns ok.
func expectLive(t *testing.T, at string, ok bool, err error) bool {
	t.Helper()
	switch {
	case ok && err != nil:
		t.Fatalf("%s: on a live stream: %v", at, err)
	case !ok && !errors.Is(err, model.ErrStreamNotFound):
		t.Fatalf("%s: on a gone stream: %v, want not found", at, err)
	}
	return ok
}

// checkAgainstModel compares the bucket's count and listing with the streams alive now.
func checkAgainstModel(t *testing.T, te *testEngine, live map[string]*lifeModel, at string) {
	t.Helper()
	now := te.clk.now().UnixMilli()
	var want []string
	for n, l := range live {
		if l.alive(now) {
			want = append(want, n)
		}
	}
	slices.Sort(want)
	if got := strings.Fields(te.listed()); !slices.Equal(got, want) {
		t.Fatalf("%s: listing %q, want %q", at, got, want)
	}
	b, err := te.Bucket("test")
	if err != nil || b.Streams != len(want) {
		t.Fatalf("%s: bucket %+v %v, want %d streams %q", at, b, err, len(want), want)
	}
}
