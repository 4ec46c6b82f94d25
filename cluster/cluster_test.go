package cluster

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/dsd-project/dsd/engine/jsstore"
	"github.com/dsd-project/dsd/engine/memstore"
	"github.com/dsd-project/dsd/engine/storage"
	"github.com/dsd-project/dsd/httpd"
	"github.com/dsd-project/dsd/subs"
)

const testPartitions = 4

// testCluster is three dsd nodes over a 3-server embedded NATS cluster; the partitions'
// storage is shared in-memory stores (the backend is not what this package tests).
type testCluster struct {
	t      *testing.T
	mu     sync.Mutex
	events []event // every node's log lines, in order
	srv    []*server.Server
	nodes  []*Node
	http   []*http.Server
	conns  []*nats.Conn
	urls   []string
}

// startNATS starts the 3-server NATS cluster. Its route ports are picked ahead (listen on
// :0, close, pass the number on: every server names them all), so on a loaded machine
// another process's connection can take one in between; StartEmbedded then fails at once
// with "address already in use" and the cluster starts again on other ports.
func startNATS(t *testing.T) []*server.Server {
	for attempt := 1; ; attempt++ {
		srv, err := tryNATS(t)
		if err == nil {
			return srv
		}
		if attempt == 3 || !strings.Contains(err.Error(), "address already in use") {
			t.Fatal(err)
		}
		t.Logf("starting the NATS cluster again on other ports: %v", err)
	}
}

// tryNATS starts the three servers on fresh route ports; on an error it shuts down those
// that started.
func tryNATS(t *testing.T) ([]*server.Server, error) {
	routes := []string{freeAddr(t), freeAddr(t), freeAddr(t)}
	srv := make([]*server.Server, 3)
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			srv[i], errs[i] = StartEmbedded(EmbedConfig{Name: fmt.Sprintf("n%d", i+1),
				Listen: "127.0.0.1:0", ClusterListen: routes[i], Routes: routes, StoreDir: t.TempDir()})
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, s := range srv {
			if s != nil {
				s.Shutdown()
			}
		}
		return nil, err
	}
	for _, s := range srv {
		t.Cleanup(s.Shutdown) // after the nodes' clean-up, registered later
	}
	return srv, nil
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// event is a line a node logged, with its time.
type event struct {
	at   time.Time
	node int
	line string
}

func startCluster(t *testing.T) *testCluster { return startClusterWith(t, nil) }

// startClusterWith starts the cluster with subscription workers configured by so (nil:
// none).
func startClusterWith(t *testing.T, so *subs.Options) *testCluster {
	tc := &testCluster{t: t, srv: startNATS(t)}
	stores := make([]*memstore.Store, testPartitions)
	for k := range stores {
		stores[k] = memstore.New()
	}
	var mu sync.Mutex
	open := func(k int, _ uint64) (storage.Backend, error) {
		mu.Lock()
		defer mu.Unlock()
		stores[k] = stores[k].Reopen()
		return stores[k], nil
	}
	for i, s := range tc.srv {
		if err := jsstore.CheckServer(s); err != nil {
			t.Fatal(err)
		}
		nc, err := nats.Connect(s.ClientURL())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		n, err := Start(nc, Config{NodeID: fmt.Sprintf("n%d", i+1), Addr: ln.Addr().String(),
			Partitions: testPartitions, Peers: 3, Rank: i, Open: open, CompatBucket: "default",
			Subscriptions: so, Logf: func(format string, args ...any) {
				line := fmt.Sprintf(format, args...)
				tc.mu.Lock()
				tc.events = append(tc.events, event{at: time.Now(), node: i, line: line})
				tc.mu.Unlock()
				t.Log(line)
			}})
		if err != nil {
			t.Fatal(err)
		}
		h := httpd.New(n.Store(), httpd.Config{CompatBucket: "default", LongPollTimeout: 5 * time.Second,
			Subscriptions: n.Subscriptions()})
		hs := &http.Server{Handler: n.Forwarder(h, "default", 32<<20)}
		go hs.Serve(ln)
		tc.nodes, tc.http, tc.conns = append(tc.nodes, n), append(tc.http, hs), append(tc.conns, nc)
		tc.urls = append(tc.urls, "http://"+ln.Addr().String())
	}
	t.Cleanup(func() {
		for i := range tc.nodes {
			tc.stop(i)
		}
	})
	return tc
}

func (tc *testCluster) stop(i int) {
	if tc.http[i] == nil {
		return
	}
	tc.http[i].Close()
	tc.nodes[i].Close()
	tc.http[i] = nil
}

// ownerOf returns the index of the node serving partition k, -1 when none does.
func (tc *testCluster) ownerOf(k int) int {
	for i, n := range tc.nodes {
		for _, p := range n.Owned() {
			if p == k {
				return i
			}
		}
	}
	return -1
}

func do(t *testing.T, method, url, body string, hdr ...string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// TestAnyNodeServesEveryPartition: a stream created through one node is appended to and
// read through the others, and a long-poll on one node is woken by an append on another.
func TestAnyNodeServesEveryPartition(t *testing.T) {
	tc := startCluster(t)
	for _, b := range []string{"alpha", "beta", "gamma", "delta"} {
		if st, _, body := do(t, "PUT", tc.urls[0]+"/"+b, ""); st != 201 {
			t.Fatalf("PUT bucket %s: %d %s", b, st, body)
		}
		if st, _, body := do(t, "PUT", tc.urls[1]+"/"+b+"/s", "", "Content-Type", "text/plain"); st != 201 {
			t.Fatalf("PUT stream in %s: %d %s", b, st, body)
		}
		if st, _, body := do(t, "POST", tc.urls[2]+"/"+b+"/s", "hello", "Content-Type", "text/plain"); st != 204 && st != 200 {
			t.Fatalf("POST in %s: %d %s", b, st, body)
		}
		if st, _, body := do(t, "GET", tc.urls[0]+"/"+b+"/s?offset=-1", ""); st != 200 || body != "hello" {
			t.Fatalf("GET in %s: %d %q", b, st, body)
		}
	}
	got := make(chan string, 1)
	go func() {
		_, _, body := do(t, "GET", tc.urls[1]+"/alpha/s?offset=-1&live=long-poll", "")
		got <- body
	}()
	time.Sleep(300 * time.Millisecond)
	do(t, "POST", tc.urls[2]+"/alpha/s", " world", "Content-Type", "text/plain")
	select {
	case b := <-got:
		if !strings.Contains(b, "hello") {
			t.Fatalf("long-poll got %q", b)
		}
	case <-time.After(4 * time.Second):
		t.Fatal("long-poll through another node not answered")
	}
	if st, _, _ := do(t, "GET", tc.urls[2]+"/v1/stream/nope", ""); st != 404 {
		t.Fatalf("compat surface through the cluster: %d, want 404", st)
	}
}

// TestOwnerLeavesAnotherTakesOver: after the owner of a partition stops, requests through
// the other nodes wait for the new owner and succeed, with the data intact.
func TestOwnerLeavesAnotherTakesOver(t *testing.T) {
	tc := startCluster(t)
	do(t, "PUT", tc.urls[0]+"/alpha", "")
	do(t, "PUT", tc.urls[0]+"/alpha/s", "one", "Content-Type", "text/plain")
	owner := tc.ownerOf(tc.nodes[0].PartitionOf("alpha"))
	if owner < 0 {
		t.Fatal("no node owns the partition of alpha")
	}
	tc.stop(owner)
	other := tc.urls[(owner+1)%3]
	start := time.Now()
	st, _, body := do(t, "POST", other+"/alpha/s", "two", "Content-Type", "text/plain")
	if st != 204 && st != 200 {
		t.Fatalf("POST after the owner left: %d %s", st, body)
	}
	t.Logf("append after the owner left took %v", time.Since(start))
	if st, _, body := do(t, "GET", tc.urls[(owner+2)%3]+"/alpha/s?offset=-1", ""); st != 200 || body != "onetwo" {
		t.Fatalf("GET after takeover: %d %q", st, body)
	}
}

// TestCutOffOwnerIsFenced: an owner cut off from NATS (it can renew nothing) stops serving
// once its lease's validity ends, and another node takes the partition over after the
// lease lapses; requests through the others wait for it and succeed.
func TestCutOffOwnerIsFenced(t *testing.T) {
	tc := startCluster(t)
	do(t, "PUT", tc.urls[0]+"/alpha", "")
	do(t, "PUT", tc.urls[0]+"/alpha/s", "one", "Content-Type", "text/plain")
	k := tc.nodes[0].PartitionOf("alpha")
	owner := tc.ownerOf(k)
	if owner < 0 {
		t.Fatal("no node owns the partition of alpha")
	}
	cut := time.Now()
	tc.conns[owner].Close()
	tc.http[owner].Close()
	other := tc.urls[(owner+1)%3]
	st, _, body := do(t, "POST", other+"/alpha/s", "two", "Content-Type", "text/plain")
	if st != 204 && st != 200 {
		t.Fatalf("POST after the owner was cut off: %d %s", st, body)
	}
	took := time.Since(cut)
	if took < leaseTTL {
		t.Fatalf("a new owner served after %v, before the old lease lapsed", took)
	}
	if eng, _, _ := tc.nodes[owner].route(k); eng != nil {
		t.Fatal("the cut-off owner still serves the partition")
	}
	if st, _, body := do(t, "GET", tc.urls[(owner+2)%3]+"/alpha/s?offset=-1", ""); st != 200 || body != "onetwo" {
		t.Fatalf("GET after takeover: %d %q", st, body)
	}
	t.Logf("append through another node after the cut took %v", took)
}

// lastEvent returns the time of the last line matching re logged by node (-1: any) and
// which node logged it; zero time when none.
func (tc *testCluster) lastEvent(node int, re *regexp.Regexp) (time.Time, int) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	for i := len(tc.events) - 1; i >= 0; i-- {
		if e := tc.events[i]; (node < 0 || e.node == node) && re.MatchString(e.line) {
			return e.at, e.node
		}
	}
	return time.Time{}, -1
}

// TestCutOffOwnersWorkerStopsFirst: the delivery worker of a partition whose owner is cut
// off from NATS stops before its lease's validity ends, so before the node that takes
// the partition over starts its own; the new owner's worker starts, and every node
// serves the same JWKS (D10, D11; base protocol §6.5).
func TestCutOffOwnersWorkerStopsFirst(t *testing.T) {
	tc := startClusterWith(t, &subs.Options{})
	do(t, "PUT", tc.urls[0]+"/alpha", "")
	k := tc.nodes[0].PartitionOf("alpha")
	delivers := regexp.MustCompile(fmt.Sprintf(`delivers partition %d's subscriptions`, k))
	var owner int
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var at time.Time
		if at, owner = tc.lastEvent(-1, delivers); !at.IsZero() {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("no worker started for partition %d", k)
		}
	}
	var jwks []string
	for _, u := range tc.urls {
		_, _, b := do(t, "GET", u+"/__ds/jwks.json", "")
		jwks = append(jwks, b)
	}
	if jwks[0] == "" || jwks[0] != jwks[1] || jwks[1] != jwks[2] {
		t.Fatalf("the nodes serve different key sets: %q", jwks)
	}
	tc.conns[owner].Close()
	tc.http[owner].Close()
	var took time.Time
	var by int
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if took, by = tc.lastEvent(-1, delivers); by != owner && !took.IsZero() {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("no other node started partition %d's worker", k)
		}
	}
	stopped, _ := tc.lastEvent(owner, regexp.MustCompile(fmt.Sprintf(`stopped partition %d's subscriptions`, k)))
	if stopped.IsZero() || !stopped.Before(took) {
		t.Fatalf("the cut-off owner's worker stopped at %v, the new owner's started at %v", stopped, took)
	}
	t.Logf("old worker stopped %v before the new one started", took.Sub(stopped))
}
