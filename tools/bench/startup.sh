#!/usr/bin/env bash
# Start-up benchmark: fill a fresh server with STARTUP_STREAMS streams holding STARTUP_TOTAL
# bytes (dsbench fill), stop it (SIGTERM, or STOP_SIGNAL=KILL for crash recovery), start it
# again on the same port and data, and measure the time from that start to the first 200 on
# HEAD of a filled stream (dsbench probe).
# Usage: tools/bench/startup.sh     (after make build; node-durable also needs peers-install)
# Env: STARTUP_KINDS ["dsd"] (dsd and/or node-durable), STARTUP_STREAMS [10000],
#      STARTUP_TOTAL [1GiB], STOP_SIGNAL [TERM], BENCH_OUT [.reports/bench], PEER_DIR [.peers].
# Appends tagged RESULT lines (case=startup-fill, case=startup) to $BENCH_OUT/results.txt.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DSBENCH="$ROOT/bin/dsbench"
PEER_DIR="${PEER_DIR:-$ROOT/.peers}"
OUT="${BENCH_OUT:-$ROOT/.reports/bench}"; mkdir -p "$OUT"
STREAMS="${STARTUP_STREAMS:-10000}"; TOTAL="${STARTUP_TOTAL:-1GiB}"; SIG="${STOP_SIGNAL:-TERM}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/ds-startup.XXXXXX")"
SPID=""
stop() {
  [ -n "$SPID" ] || return 0
  kill -"$1" "$SPID" 2>/dev/null || true
  for _ in $(seq 1 300); do kill -0 "$SPID" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$SPID" 2>/dev/null || true
  wait "$SPID" 2>/dev/null || true
  SPID=""
}
trap 'stop KILL; rm -rf "$WORK"' EXIT

# start KIND ADDR_PORT DATA LOG: starts the server in the background (SPID = its pid).
start() {
  case "$1" in
    dsd) "$ROOT/bin/dsd" --addr "127.0.0.1:$2" --admin-addr "" --data-dir "$3" --long-poll-timeout 500ms >"$4" 2>&1 & ;;
    node-durable) (cd "$PEER_DIR" && exec env DS_PORT="$2" DS_DATA_DIR="$3" node node-server.mjs) >"$4" 2>&1 & ;;
    *) echo "startup: unknown kind $1" >&2; exit 2 ;;
  esac
  SPID=$!
}

# wait_url LOG: prints the URL the server reports once it listens.
wait_url() {
  for _ in $(seq 1 600); do
    url=$(grep -o 'listening on http://[0-9.:]*' "$1" 2>/dev/null | head -1 | sed 's/^listening on //') || true
    [ -n "$url" ] && { echo "$url"; return 0; }
    kill -0 "$SPID" 2>/dev/null || break
    sleep 0.05
  done
  echo "startup: server did not start:" >&2; cat "$1" >&2; return 1
}

for kind in ${STARTUP_KINDS:-dsd}; do
  data="$WORK/$kind"; mkdir -p "$data"
  tags="server=$kind round=1"
  start "$kind" 0 "$data" "$WORK/$kind-1.log"
  url=$(wait_url "$WORK/$kind-1.log")
  port="${url##*:}"
  echo "== $(date +%T) startup: filling $kind at $url with $STREAMS streams, $TOTAL" >&2
  conns=16
  # The Node durable store loses track of appends when many streams are written at once.
  [ "$kind" = node-durable ] && conns=1
  fill=$(BENCH_TAGS="$tags case=startup-fill" "$DSBENCH" fill --base "$url" --streams "$STREAMS" --total "$TOTAL" \
    --conns "$conns" --prefix startup)
  echo "$fill" | tee -a "$OUT/log.txt" >&2
  echo "$fill" | grep '^RESULT' >>"$OUT/results.txt"
  probe_url=$(echo "$fill" | grep '^RESULT' | sed 's/.*probe_url=\([^ ]*\).*/\1/')
  stop "$SIG"
  echo "startup: $kind data: $(du -sh "$data" | cut -f1); restarting after SIG$SIG" >&2
  since=$(date +%s%N)
  start "$kind" "$port" "$data" "$WORK/$kind-2.log"
  probe=$(BENCH_TAGS="$tags case=startup streams=$STREAMS total=$TOTAL" "$DSBENCH" probe --url "$probe_url" --since-ns "$since" --timeout 120s)
  echo "$probe" | tee -a "$OUT/log.txt" >&2
  echo "$probe" | grep '^RESULT' >>"$OUT/results.txt"
  grep -q '^startup: ' "$OUT/commands.txt" 2>/dev/null ||
    echo "startup: STARTUP_KINDS=\"${STARTUP_KINDS:-dsd}\" STARTUP_STREAMS=$STREAMS STARTUP_TOTAL=$TOTAL STOP_SIGNAL=$SIG tools/bench/startup.sh (dsbench fill, restart, dsbench probe --since-ns)" >>"$OUT/commands.txt"
  stop TERM
  rm -rf "$data"
done
