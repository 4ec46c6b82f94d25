package jsstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

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

// CheckVarz, for an external cluster: a system-account connection reads every server's
// sync setting from its varz. Spec: DESIGN.md D11.
func TestCheckVarz(t *testing.T) {
	for _, sync := range []bool{true, false} {
		t.Run(fmt.Sprintf("always=%v", sync), func(t *testing.T) {
			url := startWithAccounts(t, sync)
			nc, err := nats.Connect(url, nats.UserInfo("sys", "sys"))
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			err = CheckVarz(context.Background(), nc, 300*time.Millisecond)
			if sync && err != nil {
				t.Fatalf("sync always refused: %v", err)
			}
			if !sync && !errors.Is(err, ErrSyncNotAlways) {
				t.Fatalf("lazy fsync: %v", err)
			}
		})
	}
}

// startWithAccounts starts one server with an application account (JetStream) and the
// system account, from a configuration file as an operator would write it.
func startWithAccounts(t *testing.T, sync bool) string {
	dir := t.TempDir()
	syncLine := ""
	if sync {
		syncLine = "sync_interval: always"
	}
	conf := fmt.Sprintf(`listen: "127.0.0.1:-1"
jetstream { store_dir: %q, %s }
accounts {
  APP { jetstream: enabled, users: [{user: app, password: app}] }
  SYS { users: [{user: sys, password: sys}] }
}
system_account: SYS
`, dir, syncLine)
	path := filepath.Join(dir, "nats.conf")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err := server.ProcessConfigFile(path)
	if err != nil {
		t.Fatal(err)
	}
	o.NoLog, o.NoSigs = true, true
	s, err := server.NewServer(o)
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("server not ready")
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return s.ClientURL()
}

// A partition stream made without direct gets (an older layout) is updated in place.
func TestStreamUpgrade(t *testing.T) {
	c := jstest.Start(t, 1, false)
	nc := c.Connect()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	o := Options{Partitions: 1, Replicas: 1, Servers: c.Servers()}
	st, err := Open(ctx, nc, o)
	if err != nil {
		t.Fatal(err)
	}
	cfg := st.streamConfig(0)
	cfg.AllowDirect = false
	if _, err := st.js.UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if st, err = Open(ctx, nc, o); err != nil {
		t.Fatal(err)
	}
	if !st.streams[0].CachedInfo().Config.AllowDirect {
		t.Fatal("direct gets still off")
	}
}
