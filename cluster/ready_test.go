package cluster

import (
	"testing"
	"time"
)

// Every node of a started cluster becomes ready (every partition owned here or held by a
// node seen in the lease bucket); a node that has closed answers not ready.
func TestReadyOnceEveryPartitionHasAnOwner(t *testing.T) {
	tc := startCluster(t)
	deadline := time.Now().Add(20 * time.Second)
	for i, n := range tc.nodes {
		for n.Ready() != nil {
			if time.Now().After(deadline) {
				t.Fatalf("node %d not ready: %v", i, n.Ready())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	tc.stop(0)
	if err := tc.nodes[0].Ready(); err == nil && len(tc.nodes[0].Owned()) > 0 {
		t.Fatalf("a closed node still owns %v", tc.nodes[0].Owned())
	}
}
