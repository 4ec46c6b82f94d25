//go:build !jsstore

package main

import (
	"errors"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/dsd-project/dsd/cluster"
	"github.com/dsd-project/dsd/engine/storage"
)

// partitionStores: this build has no JetStream storage backend yet (engine/jsstore lands
// on its own branch; build with -tags jsstore once it has). The sync check still runs so
// that the flags and the refusal can be tried.
func partitionStores(nc *nats.Conn, srv *server.Server, node string, replicas int) (func(k int, term uint64) (storage.Backend, error), error) {
	var err error
	if srv != nil {
		err = cluster.CheckEmbeddedSyncAlways(srv)
	} else {
		err = cluster.CheckSyncAlways(nc, 2e9)
	}
	if err != nil {
		return nil, err
	}
	return nil, errors.New("--backend jetstream: this dsd was built without engine/jsstore (build with -tags jsstore)")
}
