# A dsd cluster on NATS JetStream (README "Running a cluster", DESIGN.md D11).
#
#   make run-cluster     three dsd nodes on 127.0.0.1:4437-4439 with embedded NATS, data under
#                        ./data/cluster/nN, PIDs in nN.pid, start commands in nN.cmd
#                        (HTTP_PORTS=a,b,c etc.: the settings of tools/cluster/cluster.sh)
#   make stop-cluster    stop them (SIGTERM)
#   make cluster-check   a cluster on free ports: kit + upstream suite on node 1 and
#                        round-robin, then the fault run (nemesis + dslincheck); in make test

.PHONY: run-cluster stop-cluster cluster-check

## run-cluster: three nodes in the background (tools/cluster/cluster.sh status|kill N|restart N).
run-cluster:
	@mkdir -p $(BIN)
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/dsd ./cmd/dsd
	tools/cluster/cluster.sh start

stop-cluster:
	tools/cluster/cluster.sh stop

## cluster-check: the cluster's conformance and fault run; one tally line.
cluster-check: peers-install
	PEER_DIR=$(PEER_DIR) tools/cluster/check.sh
