package cluster

import (
	"net"
	"strings"
	"testing"
)

// A route port another process holds fails the embedded server's start with the reason
// (not a wait for readiness that never comes).
func TestStartEmbeddedSaysWhyItCannotStart(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	s, err := StartEmbedded(EmbedConfig{Name: "n1", Listen: "127.0.0.1:0", ClusterListen: l.Addr().String(),
		Routes: []string{l.Addr().String()}, StoreDir: t.TempDir()})
	if err == nil {
		s.Shutdown()
		t.Fatal("started on a route port in use")
	}
	if !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("error %q does not name the port in use", err)
	}
}
