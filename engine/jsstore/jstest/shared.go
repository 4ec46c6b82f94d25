package jstest

import (
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// Shared is one 3-node in-process cluster for a whole test binary (the engine's tests on
// DSD_TEST_BACKEND=jetstream): started on first use, it lives until the process exits.
// Its data sits in os.TempDir()/dsd-jstest-<pid>, removed by RemoveShared (from
// TestMain) or, when the binary had none, by the next start after this process ended.
type Shared struct {
	Conn    *nats.Conn
	Servers []*server.Server
	dir     string
}

var (
	sharedOnce sync.Once
	shared     *Shared
	sharedErr  error
)

// GetShared returns the binary's shared cluster, starting it on the first call.
func GetShared() (*Shared, error) {
	sharedOnce.Do(func() { shared, sharedErr = startShared(3) })
	return shared, sharedErr
}

// RemoveShared stops the shared cluster, if started, and removes its data.
func RemoveShared() {
	if shared == nil {
		return
	}
	shared.Conn.Close()
	for _, s := range shared.Servers {
		s.Shutdown()
		s.WaitForShutdown()
	}
	_ = os.RemoveAll(shared.dir)
}

func startShared(n int) (*Shared, error) {
	removeStale()
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("dsd-jstest-%d", os.Getpid()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	ports, err := pickPorts(2 * n)
	if err != nil {
		return nil, err
	}
	sh := &Shared{dir: dir}
	for i := 0; i < n; i++ {
		s, err := server.NewServer(nodeOptions(i, n, ports, dir, true))
		if err != nil {
			return nil, err
		}
		go s.Start()
		if !s.ReadyForConnections(10 * time.Second) {
			return nil, fmt.Errorf("jstest: node %d not ready", i+1)
		}
		sh.Servers = append(sh.Servers, s)
	}
	url := ""
	for i := 0; i < n; i++ {
		url += fmt.Sprintf(",nats://127.0.0.1:%d", ports[i])
	}
	if sh.Conn, err = nats.Connect(url[1:], nats.MaxReconnects(-1)); err != nil {
		return nil, err
	}
	if err := waitPeers(sh.Servers, n, 20*time.Second); err != nil {
		return nil, err
	}
	return sh, nil
}

// removeStale removes the shared clusters' directories left by processes that ended.
func removeStale() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "dsd-jstest-*"))
	for _, d := range dirs {
		pid, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(d), "dsd-jstest-"))
		if err == nil && pid != os.Getpid() && syscall.Kill(pid, 0) == syscall.ESRCH {
			_ = os.RemoveAll(d)
		}
	}
}

// Prefix returns a store prefix (partition stream names) for a test's data dir: the
// same dir gives the same prefix, so opening it again is a restart.
func Prefix(dir string) string {
	h := fnv.New64a()
	h.Write([]byte(dir))
	return fmt.Sprintf("E%X", h.Sum64())
}
