#!/usr/bin/env bash
# make bench-peers: the same workloads against the Node reference server (durable, and in
# memory), dsd, dsd-nosync and the ceiling, alternating servers (round 1: node-durable, node,
# dsd, dsd-nosync, ceiling; round 2: ...) so that machine noise hits each of them; then `dsbench report` judges issue 19's targets on the
# medians and writes them, with every server's figures, into BENCHMARKS.md's generated section.
# Usage: tools/bench/peers.sh        (after `make build peers-install`)
# Every case of every round runs on a fresh server started by tools/with-server.sh (the Node
# durable store slows down sharply once more than 100 streams have been written, so reusing a
# server would measure the earlier cases' leftovers). Cases: tools/bench/peers-case.sh.
# Env (defaults in brackets):
#   BENCH_SERVERS ["node-durable node dsd dsd-nosync ceiling"]  kinds of tools/with-server.sh, in
#     round order; dsd-nosync (the CPU cost alone) and ceiling (the bare net/http handler,
#     dsbench ceiling-server) run only the append cases, the figures issue 19 divides by
#     the ceiling's; fanout-500 runs on dsd alone (target 3's 500-subscriber p99)
#   ROUNDS [3]  BENCH_DUR [8s]  (duration of each timed workload)
#   BENCH_CASES ["append-100 wrk-append-100 append-1 wrk-append-1 write-floor fanout-500
#     fanout-1000 replay-500 batch-100 record-reads"]; write-floor and record-reads are Go
#     benchmarks (tools/bench/gobench.sh) run once per round without a server
#   FANOUT_SUBS [1000]  FANOUT_RATE [50]  REPLAY_CLIENTS [500]  REPLAY_BYTES [204800]
#   FLOOR_BENCHTIME [50000x]  RECORD_READS_BENCHTIME [1s]
#   IDLE_SUBS [10000] (0 = skip)  STARTUP_KINDS ["dsd"] ("" = skip)  STARTUP_STREAMS [10000]
#   STARTUP_TOTAL [1GiB]  MANY_STREAMS [1000000] (many-1m: dsd only, on its own server; 0 = skip)
#   BENCH_OUT [.reports/bench]  BENCHMARKS [BENCHMARKS.md]
#   BENCH_BASELINE [tools/bench/baseline.txt]  (target 7's figures from before issue 19)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HERE="$ROOT/tools/bench"
export BENCH_OUT="${BENCH_OUT:-$ROOT/.reports/bench}"
read -r -a kinds <<<"${BENCH_SERVERS:-node-durable node dsd dsd-nosync ceiling}"
read -r -a cases <<<"${BENCH_CASES:-append-100 wrk-append-100 append-1 wrk-append-1 write-floor fanout-500 fanout-1000 replay-500 batch-100 record-reads}"
ROUNDS="${ROUNDS:-3}"; IDLE_SUBS="${IDLE_SUBS:-10000}"; MANY_STREAMS="${MANY_STREAMS:-1000000}"
rm -rf "$BENCH_OUT"; mkdir -p "$BENCH_OUT"
start=$(date +%s)
load_start=$(cut -d' ' -f1-3 /proc/loadavg)

# run KIND ROUND CASE: one case on a fresh server; a failure is logged and the run goes on.
# The CPU-only kinds (dsd-nosync, ceiling) run only the append cases; fanout-500 runs on dsd.
run() {
  case "$1:$3" in
    dsd-nosync:*append-*|ceiling:*append-*|dsd:fanout-500) ;;
    dsd-nosync:*|ceiling:*|*:fanout-500) return 0 ;;
  esac
  echo "== $(date +%T) round $2: $3 on $1" | tee -a "$BENCH_OUT/log.txt" >&2
  BENCH_KIND="$1" BENCH_ROUND="$2" "$ROOT/tools/with-server.sh" "$1" "$HERE/peers-case.sh" "$3" \
    >>"$BENCH_OUT/log.txt" 2>&1 || echo "   FAILED: see $BENCH_OUT/log.txt" | tee -a "$BENCH_OUT/log.txt" >&2
}

# run_local ROUND CASE: a Go benchmark case, once per round, without a server.
run_local() {
  echo "== $(date +%T) round $1: $2 (Go benchmark)" | tee -a "$BENCH_OUT/log.txt" >&2
  BENCH_KIND=dsd BENCH_ROUND="$1" "$HERE/peers-case.sh" "$2" \
    >>"$BENCH_OUT/log.txt" 2>&1 || echo "   FAILED: see $BENCH_OUT/log.txt" | tee -a "$BENCH_OUT/log.txt" >&2
}

for r in $(seq 1 "$ROUNDS"); do
  for c in "${cases[@]}"; do
    case "$c" in
      write-floor|record-reads) run_local "$r" "$c" ;;
      *) for k in "${kinds[@]}"; do run "$k" "$r" "$c"; done ;;
    esac
  done
done
if [ "$IDLE_SUBS" -gt 0 ]; then
  for k in "${kinds[@]}"; do run "$k" 1 idle-sse-10000; done
fi
[ -z "${STARTUP_KINDS-dsd}" ] || "$HERE/startup.sh"
if [ "$MANY_STREAMS" -gt 0 ]; then
  # Issue 19 target 6: dsd only; the case starts (and restarts) its own server.
  echo "== $(date +%T) many-1m on dsd ($MANY_STREAMS streams)" | tee -a "$BENCH_OUT/log.txt" >&2
  MANY_STREAMS="$MANY_STREAMS" BENCH_KIND=dsd BENCH_ROUND=1 nice "$HERE/peers-case.sh" many-1m >>"$BENCH_OUT/log.txt" 2>&1 ||
    echo "   FAILED: see $BENCH_OUT/log.txt" | tee -a "$BENCH_OUT/log.txt" >&2
fi

settings="BENCH_SERVERS=\"${kinds[*]}\" BENCH_CASES=\"${cases[*]}\" ROUNDS=$ROUNDS BENCH_DUR=${BENCH_DUR:-8s} FANOUT_SUBS=${FANOUT_SUBS:-1000} FANOUT_RATE=${FANOUT_RATE:-50} REPLAY_CLIENTS=${REPLAY_CLIENTS:-500} IDLE_SUBS=$IDLE_SUBS STARTUP_KINDS=\"${STARTUP_KINDS-dsd}\" STARTUP_TOTAL=${STARTUP_TOTAL:-1GiB} MANY_STREAMS=$MANY_STREAMS; wall $(( $(date +%s) - start )) s; load average (1/5/15 min) at start $load_start, at end $(cut -d' ' -f1-3 /proc/loadavg)"
"$ROOT/bin/dsbench" report --out "${BENCHMARKS:-$ROOT/BENCHMARKS.md}" --commands "$BENCH_OUT/commands.txt" \
  --baseline "${BENCH_BASELINE:-$HERE/baseline.txt}" --settings "$settings" "$BENCH_OUT/results.txt" >/dev/null
grep -c '^RESULT' "$BENCH_OUT/results.txt" | xargs echo "bench-peers: RESULT lines:" >&2
echo "bench-peers: results in $BENCH_OUT (results.txt, log.txt); table in ${BENCHMARKS:-$ROOT/BENCHMARKS.md}" >&2
