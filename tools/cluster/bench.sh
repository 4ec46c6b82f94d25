#!/usr/bin/env bash
# The cluster row of BENCHMARKS.md: durable appends (dsbench append, 100 streams, 50
# connections, 100 B) against a single-node bbolt dsd and against node 1 of a 3-node
# cluster on embedded JetStream, in the same run; then the same load on the cluster while
# the JetStream leader of the streams' partition is SIGKILLed (and restarted), whose
# max_ms is the longest wait for an acknowledgement across the leader's loss.
# Prints the RESULT lines and one summary line. Env: BIN (bin), BENCH_DUR (8s), KILL_DUR (30s).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BIN="${BIN:-$ROOT/bin}"
DUR="${BENCH_DUR:-8s}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/dsd-cluster-bench.XXXXXX")"
export DSD_BIN="$BIN/dsd" PARTITIONS="${PARTITIONS:-6}"
trap '"$ROOT/tools/cluster/cluster.sh" stop >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT
LOAD=(append --streams 100 --conns 50 --size 100)
(cd "$ROOT" && go build -o "$WORK/" ./tools/cluster/nemesis ./tools/cluster/rrproxy)

bbolt="$("$ROOT/tools/with-server.sh" dsd sh -c "\"$BIN/dsbench\" ${LOAD[*]} --duration $DUR --base \"\$DS_BASE_URL\" --tags server=bbolt" 2>/dev/null | grep '^RESULT')"
echo "$bbolt"
# shellcheck source=tools/cluster/lib.sh
. "$ROOT/tools/cluster/lib.sh"
start_cluster_on_free_ports >/dev/null
cl="$("$BIN/dsbench" "${LOAD[@]}" --duration "$DUR" --base "$N1" --tags server=cluster3 | grep '^RESULT')"
echo "$cl"
# The kill run goes through the round-robin proxy, which skips the dead node.
"$WORK/rrproxy" "${NODES[@]}" >"$WORK/rrproxy.log" 2>&1 &
rrp=$!
sleep 0.5
RR="$(grep -o 'http://[0-9.:]*' "$WORK/rrproxy.log" | head -1)"
"$WORK/nemesis" --nats "$NATS" --bucket default --partitions "$PARTITIONS" --kills 1 --roles leader \
  --start-delay 8s --down 5s --cluster "$ROOT/tools/cluster/cluster.sh" >"$WORK/nemesis.log" 2>&1 &
nem=$!
kill_run="$("$BIN/dsbench" "${LOAD[@]}" --duration "${KILL_DUR:-30s}" --timeout 60s --base "$RR" --tags server=cluster3-leader-kill | grep '^RESULT')"
wait "$nem" || true
kill "$rrp" 2>/dev/null || true
echo "$kill_run"
grep "nemesis:" "$WORK/nemesis.log" || true
get() { sed -n "s/.* $2=\([^ ]*\).*/\1/p" <<<"$1"; }
awk -v b="$(get "$bbolt" rps)" -v c="$(get "$cl" rps)" -v g="$(get "$kill_run" max_ms)" \
  'BEGIN { printf "cluster: %.0f req/s vs bbolt %.0f req/s = %.2fx; longest ack wait during a leader kill %.0f ms\n", c, b, c / b, g }'
