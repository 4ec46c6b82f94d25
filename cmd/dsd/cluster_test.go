package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/dsd-project/dsd/engine/jsstore"
)

// TestRefusesJetStreamWithoutSyncAlways: against an external NATS whose JetStream does not
// fsync before it acknowledges (the default), dsd refuses to start (D11).
func TestRefusesJetStreamWithoutSyncAlways(t *testing.T) {
	sys := server.NewAccount("SYS")
	app := server.NewAccount("APP")
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT,
		JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true,
		Accounts: []*server.Account{sys, app}, SystemAccount: "SYS",
		Users: []*server.User{{Username: "sys", Password: "pw", Account: sys}, {Username: "app", Password: "pw", Account: app}}})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	defer s.Shutdown()
	if !s.ReadyForConnections(10e9) {
		t.Fatal("nats-server not ready")
	}
	url := func(user string) string { return "nats://" + user + ":pw@" + s.Addr().String() }
	o, _, err := parseFlags([]string{"--backend", "jetstream", "--nats-url", url("app"), "--nats-sys-url", url("sys"),
		"--addr", "127.0.0.1:1", "--data-dir", t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	sv, err := openServed(o, nil)
	if err == nil {
		sv.close()
		t.Fatal("dsd started on JetStream without sync_interval: always")
	}
	if !errors.Is(err, jsstore.ErrSyncNotAlways) {
		t.Fatalf("the refusal does not say why: %v", err)
	}
	t.Logf("refused: %v", err)
}

// TestRejectsUnknownBackend: --backend names one of bbolt and jetstream.
func TestRejectsUnknownBackend(t *testing.T) {
	o, _, err := parseFlags([]string{"--backend", "etcd", "--data-dir", t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := openServed(o, nil); err == nil || !strings.Contains(err.Error(), "bbolt or jetstream") {
		t.Fatalf("--backend etcd: %v", err)
	}
}
