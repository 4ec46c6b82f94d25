# Benchmarks (not part of `make test`).
#   make bench        the repo's Go testing.B benchmarks (BENCHTIME, BENCH_PKGS, BENCH_FILTER).
#   make bench-peers  dsbench workloads against the Node reference server (durable and in
#                     memory) and dsd, alternating round by round; writes BENCHMARKS.md's
#                     generated section. About 15 min with the defaults (ROUNDS=1: 6 min); knobs (see
#                     tools/bench/peers.sh): BENCH_SERVERS, ROUNDS, BENCH_DUR, FANOUT_SUBS,
#                     REPLAY_CLIENTS, IDLE_SUBS, STARTUP_KINDS, STARTUP_TOTAL, WRK.
#   make bench-startup  only the start-up measurement (tools/bench/startup.sh).
#   make bench-cluster  durable appends of a 3-node JetStream cluster vs single-node bbolt in the
#                     same run, and the longest ack wait across a leader kill (tools/cluster/
#                     bench.sh; BENCHMARKS.md "Cluster"); bench-peers runs it after the peers.

BENCHTIME    ?= 1s
BENCH_PKGS   ?= ./...
BENCH_FILTER ?= .

.PHONY: bench bench-peers bench-startup bench-cluster

bench:
	$(GO) test -run '^$$' -bench '$(BENCH_FILTER)' -benchmem -benchtime $(BENCHTIME) -timeout $(TIMEOUT) $(BENCH_PKGS)

bench-peers: build peers-install
	PEER_DIR=$(PEER_DIR) tools/bench/peers.sh
	BIN=$(BIN) tools/cluster/bench.sh

bench-cluster: build
	BIN=$(BIN) tools/cluster/bench.sh

bench-startup: build
	PEER_DIR=$(PEER_DIR) tools/bench/startup.sh
