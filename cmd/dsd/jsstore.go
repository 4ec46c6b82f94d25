package main

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/dsd-project/dsd/engine/jsstore"
	"github.com/dsd-project/dsd/engine/storage"
)

// partitionStores checks JetStream's sync setting (the embedded server srv, else every
// server's varz over sys, a system-account connection) and returns the opener of partition k's storage: a jsstore store
// of one JetStream stream "DSD<k>P0" holding the partition's buckets, names and logs.
func partitionStores(nc, sys *nats.Conn, srv *server.Server, node string, replicas int) (func(k int, term uint64) (storage.Backend, error), error) {
	// One store per partition: the frame cache is per store, so smaller than the default.
	jo := jsstore.Options{Partitions: 1, Replicas: replicas, NodeID: node, FrameCacheBytes: 4 << 20}
	var err error
	if srv != nil {
		err = jsstore.CheckServer(srv)
		jo.Servers = []*server.Server{srv}
	} else {
		if err = jsstore.CheckVarz(context.Background(), sys, 2*time.Second); err != nil {
			err = fmt.Errorf("dsd refuses to start unless every JetStream server runs with sync_interval: always: %w", err)
		}
		jo.SysConn = sys
	}
	if err != nil {
		return nil, err
	}
	return func(k int, _ uint64) (storage.Backend, error) {
		ko := jo
		ko.Prefix = fmt.Sprintf("DSD%d", k)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		st, err := jsstore.Open(ctx, nc, ko)
		if err != nil {
			return nil, err
		}
		return st, nil
	}, nil
}
