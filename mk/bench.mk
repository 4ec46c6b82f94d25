# Benchmarks (not part of `make test`).
#   make bench        the repo's Go testing.B benchmarks (BENCHTIME, BENCH_PKGS, BENCH_FILTER).
#   make bench-peers  dsbench workloads against the Node reference server (durable and in
#                     memory), dsd, dsd --unsafe-no-sync and the net/http ceiling, alternating
#                     round by round, plus the write(2) floor and record-read Go benchmarks;
#                     writes BENCHMARKS.md's generated section (issue 19's targets judged, every
#                     server's figures). About 22 min with the defaults (ROUNDS=1: 11 min);
#                     knobs (see tools/bench/peers.sh): BENCH_SERVERS, BENCH_CASES, ROUNDS,
#                     BENCH_DUR, FANOUT_SUBS, REPLAY_CLIENTS, IDLE_SUBS, STARTUP_KINDS,
#                     STARTUP_TOTAL, BENCH_BASELINE, BENCHMARKS, WRK.
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
