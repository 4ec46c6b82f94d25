#!/usr/bin/env bash
# make cluster-check: a 3-node dsd cluster on embedded NATS JetStream, on free loopback
# ports, checked by the conformance kit (both surfaces, ext:subscriptions included: the
# webhooks are delivered by the partition's owner) and the upstream suite against
# node 1 and round-robin through all three nodes (tools/cluster/rrproxy), then a fault
# run: dslincheck through the round-robin proxy while tools/cluster/nemesis SIGKILLs and
# restarts the JetStream leader of a partition, its owner and a follower (at least
# KILLS kills). dslincheck checks linearizability, the final contents against the
# linearized writes and the offsets; tools/cluster/dedupcheck, running alongside, resends
# producer appends of unknown outcome across the failovers and checks that each was
# applied once and every acknowledged append is readable at its offset with its bytes.
# Prints one tally line "N passed, N failed"; exit 1 if anything failed.
# Env: PEER_DIR (.peers), KILLS (6), PARTITIONS (6), KEEP_DATA=1,
#      CHECKS ("conformance fault": which parts run).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PEER_DIR="${PEER_DIR:-$ROOT/.peers}"
KILLS="${KILLS:-6}"
export PARTITIONS="${PARTITIONS:-6}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/dsd-cluster.XXXXXX")"
export DSD_BIN="$WORK/dsd"
# Subscriptions with webhooks and the loopback exception: the kit's receivers are on
# 127.0.0.1 (as make conformance runs dsd).
export DSD_FLAGS="--long-poll-timeout ${DS_LONGPOLL_MS:-500}ms --webhooks --webhook-allow-loopback"
passed=0 failed=0
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  "$ROOT/tools/cluster/cluster.sh" stop >/dev/null 2>&1 || true
  [ "${KEEP_DATA:-0}" = 1 ] && echo "cluster-check: kept $WORK" >&2 || rm -rf "$WORK"
}
trap cleanup EXIT
step() { # step NAME COMMAND...: run, count, keep the log
  local name="$1"; shift
  local log="$WORK/${name// /-}.log" t0=$SECONDS
  if "$@" >"$log" 2>&1; then
    passed=$((passed + 1)); echo "cluster-check: PASS $name ($((SECONDS - t0))s)"
  else
    failed=$((failed + 1)); echo "cluster-check: FAIL $name ($((SECONDS - t0))s)"
    if grep -q 'FAIL' "$log"; then # what failed, not only how the step ended
      echo "  first failures:"; grep -n -B2 -A14 'FAIL' "$log" | head -60 | sed 's/^/  /'
    fi
    echo "  last lines:"; tail -25 "$log" | sed 's/^/  /'
  fi
}

(cd "$ROOT" && go build -o "$WORK/" ./cmd/dsd ./cmd/dsconform ./cmd/dslincheck ./tools/cluster/rrproxy \
  ./tools/cluster/nemesis ./tools/cluster/dedupcheck) || { echo "0 passed, 1 failed"; exit 1; }
BIN="$WORK"

t0=$SECONDS
# shellcheck source=tools/cluster/lib.sh
. "$ROOT/tools/cluster/lib.sh"
start_cluster_on_free_ports || { echo "0 passed, 1 failed"; exit 1; }
echo "cluster-check: cluster up in $((SECONDS - t0))s: ${NODES[*]}"
"$WORK/rrproxy" "${NODES[@]}" >"$WORK/rrproxy.log" 2>&1 &
PIDS+=($!)
RR=""
for _ in $(seq 1 100); do
  RR="$(grep -o 'http://[0-9.:]*' "$WORK/rrproxy.log" | head -1)" && [ -n "$RR" ] && break; sleep 0.1
done

EXT="fork,json-record-coordinates-v1,snapshot,bootstrap,append-batch,attrs,subscriptions"
CONF=("$BIN/dsconform" --mode full --long-poll-timeout "${DS_LONGPOLL_MS:-500}ms" --extensions "$EXT" --profiles dsd --compat-bucket default)
CHECKS="${CHECKS:-conformance fault}"
[[ "$CHECKS" == *conformance* ]] && for target in "node1=$N1" "round-robin=$RR"; do
  name="${target%%=*}" url="${target#*=}"
  for surface in bucketed flat; do
    step "kit $surface $name" "${CONF[@]}" --surface "$surface" --base-url "$url" --report-dir "$WORK/reports/$name-$surface"
  done
  if [ -f "$PEER_DIR/node_modules/@durable-streams/server/package.json" ]; then
    step "upstream suite $name" env DS_BASE_URL="$url" DS_SUBSCRIPTIONS=1 "$ROOT/tools/run-upstream-suite.sh"
  else
    echo "cluster-check: SKIP upstream suite $name: peers not installed (make peers-install)"
  fi
done

# Fault run: the nemesis attacks the flat surface's bucket while dslincheck runs (again
# and again, each run checked) until the nemesis is done.
fault_run() {
  "$WORK/nemesis" --nats "$NATS" --bucket default --partitions "$PARTITIONS" --kills "$KILLS" \
    --cluster "$ROOT/tools/cluster/cluster.sh" --deadline 4m &
  local nem=$! runs=0 bad=0
  "$BIN/dedupcheck" --base-url "$RR" --writers 4 --duration 4m --stop-file "$WORK/nemesis.done" &
  local dd=$!
  while kill -0 "$nem" 2>/dev/null && [ "$bad" -lt 3 ]; do
    runs=$((runs + 1))
    "$BIN/dslincheck" --base-url "$RR" --surface flat --clients 8 --ops 400 --streams 4 \
      --timeout 25s --live-timeout 60s --live-retry 250ms --check-timeout 2m --report-dir "$WORK/reports/fault-$runs" || bad=$((bad + 1))
  done
  kill "$nem" 2>/dev/null # after 3 failed runs: no point in going on
  wait "$nem"; local nrc=$?
  touch "$WORK/nemesis.done"
  wait "$dd"; local drc=$?
  echo "fault run: $runs dslincheck runs, $bad failed; nemesis exit $nrc; dedupcheck exit $drc"
  [ "$bad" = 0 ] && [ "$nrc" = 0 ] && [ "$drc" = 0 ]
}
[[ "$CHECKS" == *fault* ]] && step "fault run (>= $KILLS kills, dslincheck)" fault_run
grep -h "nemesis: \|fault run:\|dedupcheck: " "$WORK"/fault-run*.log 2>/dev/null | sed 's/^/  /'
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
