#!/usr/bin/env bash
# One bench-peers case against the server tools/with-server.sh started (DS_BASE_URL,
# DS_SERVER_PID), or without one for the Go benchmark cases (write-floor, record-reads).
# Usage: peers-case.sh CASE, with BENCH_KIND and BENCH_ROUND set (peers.sh).
# Appends the case's RESULT lines, tagged server=KIND round=R case=CASE, to
# $BENCH_OUT/results.txt and its command (once per case) to $BENCH_OUT/commands.txt; the
# workload's whole output goes to stdout. Knobs: see tools/bench/peers.sh.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DSBENCH="$ROOT/bin/dsbench"
OUT="${BENCH_OUT:?}"; CASE="${1:?usage: peers-case.sh CASE}"
DUR="${BENCH_DUR:-8s}"
REPLAY_CLIENTS="${REPLAY_CLIENTS:-500}"; MSG=$(( ${REPLAY_BYTES:-204800} / 50 ))

# step NAME COMMAND...: runs one workload tagged case=NAME; keeps its RESULT line.
step() {
  local name="$1"; shift
  grep -q "^$name: " "$OUT/commands.txt" 2>/dev/null || echo "$name: $*" | sed "s#$ROOT/##g" >>"$OUT/commands.txt"
  local out
  out=$(BENCH_TAGS="server=${BENCH_KIND:?} round=${BENCH_ROUND:?} case=$name" "$@")
  echo "$out"
  echo "$out" | grep '^RESULT' >>"$OUT/results.txt"
  echo "$out" | grep '^RESULT' | cut -c1-200 >&2
}

# many_case: issue 19 target 6 on a dsd of its own (the restart is part of the case, measured
# as tools/bench/startup.sh does): MANY_STREAMS streams in one bucket (dsbench many), then a
# restart on the same port and data, timed to the first answered HEAD (dsbench probe).
many_case() {
  local url probe_url since
  work="$(mktemp -d "${TMPDIR:-/tmp}/ds-many.XXXXXX")"
  start_dsd() { # LOG ADDR: starts dsd on $work/data (pid in $pid), prints its URL
    # shellcheck disable=SC2086
    "$ROOT/bin/dsd" --addr "$2" --admin-addr "" --data-dir "$work/data" --long-poll-timeout 500ms \
      ${DSD_FLAGS:-} >"$1" 2>&1 &
    pid=$!
  }
  wait_url() {
    for _ in $(seq 1 1200); do
      url=$(grep -o 'listening on http://[0-9.:]*' "$1" 2>/dev/null | head -1 | sed 's/^listening on //') || true
      [ -n "$url" ] && return 0
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.05
    done
    echo "many: dsd did not start:" >&2; cat "$1" >&2; return 1
  }
  trap 'kill -KILL "${pid:-}" 2>/dev/null || true; rm -rf "${work:-}"' EXIT
  start_dsd "$work/1.log" 127.0.0.1:0
  wait_url "$work/1.log"
  out=$(DS_SERVER_PID=$pid step "$CASE" "$DSBENCH" many --base "$url" --bucket many --prefix many \
    --streams "${MANY_STREAMS:-1000000}" --duration "$DUR")
  echo "$out"
  probe_url=$(echo "$out" | grep '^RESULT' | sed 's/.*probe_url=\([^ ]*\).*/\1/')
  kill -TERM "$pid"; wait "$pid" 2>/dev/null || true
  echo "many: data $(du -sh "$work/data" | cut -f1); restarting on ${url##*/}" >&2
  since=$(date +%s%N)
  start_dsd "$work/2.log" "${url#http://}"
  step "$CASE-startup" "$DSBENCH" probe --url "$probe_url" --since-ns "$since" --timeout 120s
  kill -TERM "$pid"; wait "$pid" 2>/dev/null || true
}

case "$CASE" in
  append-100) step "$CASE" "$DSBENCH" append --streams 100 --conns 50 --size 100 --duration "$DUR" ;;
  append-1) step "$CASE" "$DSBENCH" append --streams 1 --conns 50 --size 100 --duration "$DUR" ;;
  wrk-append-100) step "$CASE" "$ROOT/tools/bench/wrk-append.sh" --streams 100 --conns 50 --size 100 --duration "$DUR" ;;
  wrk-append-1) step "$CASE" "$ROOT/tools/bench/wrk-append.sh" --streams 1 --conns 50 --size 100 --duration "$DUR" ;;
  fanout-500) step "$CASE" "$DSBENCH" fanout --subscribers 500 --rate "${FANOUT_RATE:-50}" \
    --duration "$DUR" --connect-timeout 20s --timeout 10s ;;
  fanout-1000) step "$CASE" "$DSBENCH" fanout --subscribers "${FANOUT_SUBS:-1000}" --rate "${FANOUT_RATE:-50}" \
    --duration "$DUR" --connect-timeout 20s --timeout 10s ;;
  replay-500)
    # One PUT with the whole content per stream, one request at a time: the Node durable store
    # answers 404 to (and half-applies) appends when more than 100 streams are written at once.
    step replay-setup "$DSBENCH" replay --read=false --put-body --setup-conns 1 --clients "$REPLAY_CLIENTS" \
      --messages 50 --msg-size "$MSG" --prefix replay
    step replay-500 "$DSBENCH" replay --setup=false --clients "$REPLAY_CLIENTS" --messages 50 --msg-size "$MSG" --prefix replay
    step replay-bootstrap-500 "$DSBENCH" replay --setup=false --bootstrap --clients "$REPLAY_CLIENTS" \
      --messages 50 --msg-size "$MSG" --prefix replay ;;
  batch-100) step "$CASE" "$DSBENCH" batch --streams 100 --conns 50 --frames 100 --frame-size 100 --duration "$DUR" ;;
  many-1m) many_case ;;
  # Go benchmarks, run without a server (BENCH_KIND=dsd): the write(2) floor fan-out's CPU per
  # delivery is judged against, and record reads (issue 19, targets 3 and 7).
  write-floor) step "$CASE" "$ROOT/tools/bench/gobench.sh" ./httpd LoopbackWriteFloor "${FLOOR_BENCHTIME:-50000x}" ;;
  record-reads) step "$CASE" "$ROOT/tools/bench/gobench.sh" ./engine RecordRead "${RECORD_READS_BENCHTIME:-1s}" ;;
  idle-sse-10000) step "$CASE" "$DSBENCH" idle-sse --subscribers "${IDLE_SUBS:-10000}" --connect-timeout 45s ;;
  *) echo "peers-case: unknown case $CASE" >&2; exit 2 ;;
esac
