package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dsd-project/dsd/cluster"
)

// freePorts returns n loopback ports free at the time of the call.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ls []net.Listener
	var out []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return out
}

// testCluster is three dsd processes on embedded NATS JetStream (D11).
type testCluster struct {
	nodes []*dsdProcess
	args  [][]string
}

func startTestCluster(t *testing.T, partitions int, extra ...string) *testCluster {
	t.Helper()
	p := freePorts(t, 9)
	var routes []string
	for i := range 3 {
		routes = append(routes, fmt.Sprintf("127.0.0.1:%d", p[6+i]))
	}
	dir := t.TempDir()
	c := &testCluster{}
	for i := range 3 {
		args := append([]string{"--backend", "jetstream", "--addr", fmt.Sprintf("127.0.0.1:%d", p[i]),
			"--data-dir", filepath.Join(dir, fmt.Sprintf("n%d", i+1)), "--node-id", fmt.Sprintf("n%d", i+1),
			"--nats-listen", fmt.Sprintf("127.0.0.1:%d", p[3+i]), "--nats-cluster-listen", routes[i],
			"--nats-routes", strings.Join(routes, ","), "--partitions", fmt.Sprint(partitions),
			"--admin-addr", "127.0.0.1:0", "--long-poll-timeout", "500ms"}, extra...)
		c.args = append(c.args, args)
	}
	type launched struct {
		p   *dsdProcess
		err error
	}
	started := make(chan launched, 3)
	bin := dsdBinary(t)
	for i := range 3 { // together: a node's start waits for a JetStream quorum
		go func() {
			p, err := launchDSD(bin, c.args[i]...)
			started <- launched{p, err}
		}()
	}
	byURL := map[string]*dsdProcess{}
	var errs []error
	for range 3 {
		l := <-started
		if l.err != nil {
			errs = append(errs, l.err)
			continue
		}
		t.Cleanup(l.p.kill)
		byURL[l.p.url] = l.p
	}
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for i := range 3 {
		c.nodes = append(c.nodes, byURL[fmt.Sprintf("http://127.0.0.1:%d", p[i])])
	}
	for _, n := range c.nodes {
		waitStatus(t, "HEAD", n.url+"/default", 200, 60*time.Second)
	}
	return c
}

// waitStatus polls u until it answers want.
func waitStatus(t *testing.T, method, u string, want int, d time.Duration) {
	t.Helper()
	for end := time.Now().Add(d); ; time.Sleep(100 * time.Millisecond) {
		resp, err := do(method, u, "", nil, nil)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == want {
				return
			}
		}
		if time.Now().After(end) {
			t.Fatalf("%s %s did not answer %d within %v (%v)", method, u, want, d, err)
		}
	}
}

// deliverer returns the index of the node whose log says it delivers partition k's
// subscriptions last (no other node took it after).
func (c *testCluster) deliverer(t *testing.T, k int, d time.Duration) int {
	t.Helper()
	re := regexp.MustCompile(fmt.Sprintf(`delivers partition %d's subscriptions \(term (\d+)\)`, k))
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		best, term := -1, ""
		for i, n := range c.nodes {
			for _, m := range re.FindAllStringSubmatch(n.log.String(), -1) {
				if len(m[1]) > len(term) || len(m[1]) == len(term) && m[1] > term {
					best, term = i, m[1]
				}
			}
		}
		if best >= 0 {
			return best
		}
	}
	t.Fatalf("no node delivers partition %d's subscriptions", k)
	return -1
}

// Subscriptions in a cluster: a webhook delivery fails on the owner of the bucket's
// partition, the owner is SIGKILLed mid-delivery, and the node that takes the partition
// over resumes the same wake from the persisted state (retry schedule, wake, cursor); the
// cursor acknowledged before the kill is kept, the signature verifies with the JWKS every
// node served before the kill, and the done reply moves the cursor to the tail. A
// pull-wake claim made before the kill is acknowledged after it through another node with
// its token (the token key is the cluster's, the claim's lease restarts in full). Spec:
// base protocol §7.1 (retry metadata persisted, redelivery allowed), B-7-04, B-7-05, B-6-08,
// D10, D11.
func TestClusterWebhookResumesOnNewOwner(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills a 3-node dsd cluster; skipped with -short")
	}
	c := startTestCluster(t, 2, "--webhooks", "--webhook-allow-loopback")
	hook := newHookReceiver(t, 0)
	root := func(i int) string { return c.nodes[i].url + "/v1/stream/" }
	mustDo(t, "PUT", root(0)+"jobs/a", "text/plain", "", nil, 201)
	mustDo(t, "PUT", root(1)+"__ds/subscriptions/r1", "application/json",
		`{"type":"webhook","streams":["jobs/a"],"webhook":{"url":"`+hook.srv.URL+`/h"},"lease_ttl_ms":600000}`, nil, 201)
	var jwks [3][]byte
	for i := range 3 {
		jwks[i] = mustDo(t, "GET", c.nodes[i].url+"/__ds/jwks.json", "", "", nil, 200)
		if !bytes.Equal(jwks[i], jwks[0]) {
			t.Fatalf("node %d serves another JWKS:\n%s\n%s", i+1, jwks[i], jwks[0])
		}
	}
	// A pull-wake claim made before the kill, acknowledged after it through another node.
	mustDo(t, "PUT", root(0)+"wake/pool", "application/json", "[]", nil, 201)
	mustDo(t, "PUT", root(0)+"jobs/b", "text/plain", "", nil, 201)
	mustDo(t, "PUT", root(2)+"__ds/subscriptions/p1", "application/json",
		`{"type":"pull-wake","streams":["jobs/b"],"wake_stream":"wake/pool","lease_ttl_ms":600000}`, nil, 201)
	mustDo(t, "POST", root(1)+"jobs/b", "text/plain", "job", nil, 204)
	var claim struct {
		WakeID     string `json:"wake_id"`
		Generation uint64 `json:"generation"`
		Token      string `json:"token"`
	}
	claimBody := claimWhenWoken(t, root(2)+"__ds/subscriptions/p1/claim")
	if err := json.Unmarshal(claimBody, &claim); err != nil {
		t.Fatal(err)
	}
	// One delivery acknowledged (done) before the kill: its cursor must survive.
	mustDo(t, "POST", root(2)+"jobs/a", "text/plain", "one", nil, 204)
	first := hook.wait(t, 1, 10*time.Second)
	verifies(t, first, jwks[0])
	acked := `"acked_offset":"0000000000000000_0000000000000003"`
	waitDoc(t, root(0)+"__ds/subscriptions/r1", acked, 10*time.Second)
	hook.mu.Lock()
	hook.fail = 1 << 30 // every further delivery fails until the kill
	hook.mu.Unlock()
	mustDo(t, "POST", root(0)+"jobs/a", "text/plain", "two", nil, 204)
	failed := hook.wait(t, 2, 10*time.Second)
	owner := c.deliverer(t, cluster.PartitionOf("default", 2), 5*time.Second)
	waitDoc(t, root((owner+1)%3)+"__ds/subscriptions/r1", `"status":"failed"`, 5*time.Second)
	c.nodes[owner].kill()
	hook.mu.Lock()
	before := len(hook.calls)
	hook.fail = 0
	hook.mu.Unlock()
	survivor := root((owner + 1) % 3)
	resumed := hook.wait(t, before+1, 40*time.Second)
	if resumed.wake != failed.wake {
		t.Fatalf("the new owner delivered wake %+v, want the failed wake %+v resumed", resumed.wake, failed.wake)
	}
	if now := c.deliverer(t, cluster.PartitionOf("default", 2), time.Second); now == owner {
		t.Fatalf("the resumed delivery came before another node took the partition over")
	}
	verifies(t, resumed, jwks[0])
	var payload struct {
		Streams []struct {
			Path  string `json:"path"`
			Acked string `json:"acked_offset"`
		} `json:"streams"`
	}
	if err := json.Unmarshal(resumed.body, &payload); err != nil || len(payload.Streams) != 1 ||
		payload.Streams[0].Acked != "0000000000000000_0000000000000003" {
		t.Fatalf("the resumed wake lost the acknowledged cursor: %s (%v)", resumed.body, err)
	}
	waitDoc(t, survivor+"__ds/subscriptions/r1", `"acked_offset":"0000000000000000_0000000000000006"`, 10*time.Second)
	waitDoc(t, survivor+"__ds/subscriptions/r1", `"status":"active"`, 5*time.Second)
	ack, _ := json.Marshal(map[string]any{"wake_id": claim.WakeID, "generation": claim.Generation,
		"acks": []map[string]string{{"stream": "jobs/b", "offset": "0000000000000000_0000000000000003"}}, "done": true})
	if got := mustDo(t, "POST", survivor+"__ds/subscriptions/p1/ack", "application/json", string(ack),
		map[string]string{"Authorization": "Bearer " + claim.Token}, 200); string(got) != `{"ok":true,"next_wake":false}` {
		t.Fatalf("pull-wake ack after the failover: %s", got)
	}
	if got := mustDo(t, "GET", survivor+"__ds/jwks.json", "", "", nil, 200); !bytes.Equal(got, jwks[0]) {
		t.Fatalf("JWKS changed across the failover:\n%s\n%s", jwks[0], got)
	}
}

// claimWhenWoken claims a pull-wake subscription once its wake is issued (409
// NO_PENDING_WORK until then) and returns the claim's body.
func claimWhenWoken(t *testing.T, u string) []byte {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		resp, err := do("POST", u, "application/json", []byte(`{"worker":"w1"}`), nil)
		if err != nil {
			t.Fatal(err)
		}
		b := new(bytes.Buffer)
		_, _ = b.ReadFrom(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return b.Bytes()
		}
		if time.Now().After(end) {
			t.Fatalf("claim: %d %s", resp.StatusCode, b)
		}
	}
}

// waitDoc polls a subscription document until it contains want.
func waitDoc(t *testing.T, u, want string, d time.Duration) {
	t.Helper()
	var last []byte
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		resp, err := do("GET", u, "", nil, nil)
		if err != nil {
			continue
		}
		b := new(bytes.Buffer)
		_, _ = b.ReadFrom(resp.Body)
		resp.Body.Close()
		if last = b.Bytes(); resp.StatusCode == http.StatusOK && bytes.Contains(last, []byte(want)) {
			return
		}
	}
	t.Fatalf("%s never showed %s; last: %s", u, want, last)
}
