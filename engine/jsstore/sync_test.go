package jsstore

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/dsd-project/dsd/engine/jsstore/jstest"
)

// Open refuses a JetStream that acknowledges before it fsyncs, and one whose setting it
// cannot check. Spec: DESIGN.md D11, design/distributed.md §3.
func TestSyncCheck(t *testing.T) {
	c := jstest.Start(t, 1, true)
	nc := c.Connect()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := Open(ctx, nc, Options{Partitions: 1, Replicas: 1, Servers: c.Servers()})
	if !errors.Is(err, ErrSyncNotAlways) {
		t.Fatalf("lazy fsync: %v", err)
	}
	if _, err := Open(ctx, nc, Options{Partitions: 1, Replicas: 1}); err == nil || !strings.Contains(err.Error(), "cannot check") {
		t.Fatalf("unchecked: %v", err)
	}
	if err := CheckVarz(ctx, nc, 200*time.Millisecond); err == nil {
		t.Fatal("a connection outside the system account verified the setting")
	}
	if _, err := Open(ctx, nc, Options{Partitions: 1, Replicas: 1, UnsafeSkipSyncCheck: true}); err != nil {
		t.Fatalf("skipped check: %v", err)
	}
}
