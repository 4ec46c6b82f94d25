#!/usr/bin/env bash
# The append workload driven by wrk instead of dsbench, to calibrate dsbench's numbers.
# Usage: tools/bench/wrk-append.sh [--streams N] [--conns C] [--threads T] [--duration D] [--size B]
#   (defaults 100, 50, 2, 10s, 100; targets $DS_BASE_URL, e.g. under tools/with-server.sh)
# Creates N text/plain streams (flat surface, or {base}/{BUCKET}/ with BUCKET set and the
# bucket created), then runs wrk -t T -c C -d D with wrk-append.lua.
# Prints wrk's own summary to stderr and one dsbench-style RESULT line (BENCH_TAGS added, and
# client_cpu_us_per_req = wrk's user+sys CPU per request; server_cpu_us_per_req from
# /proc/$DS_SERVER_PID/stat when DS_SERVER_PID is set) to stdout.
# Env: BUCKET (""), BENCH_TAGS ("key=value ..."). Installs wrk with apt-get when missing and root.
set -euo pipefail
BASE="${DS_BASE_URL:?DS_BASE_URL is required}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
N=100; CONNS=50; THREADS=2; DUR=10s; SIZE=100
while [ $# -gt 0 ]; do
  case "$1" in
    --streams) N="$2" ;; --conns) CONNS="$2" ;; --threads) THREADS="$2" ;;
    --duration) DUR="$2" ;; --size) SIZE="$2" ;;
    *) echo "wrk-append: unknown argument $1" >&2; exit 2 ;;
  esac
  shift 2
done
if ! command -v wrk >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    { apt-get install -y wrk || { apt-get update && apt-get install -y wrk; }; } >&2
  else
    echo "wrk-append: wrk not found (apt-get install -y wrk)" >&2; exit 1
  fi
fi
if [ -n "${BUCKET:-}" ]; then SURFACE="/$BUCKET/"; else SURFACE="/v1/stream/"; fi
PREFIX="${SURFACE}wrk-$(date +%s%N)"
for i in $(seq 0 $((N - 1))); do
  code=$(curl -s -o /dev/null -w '%{http_code}' -X PUT -H 'Content-Type: text/plain' "$BASE$PREFIX-$i")
  case "$code" in 200|201) ;; *) echo "wrk-append: create $PREFIX-$i: HTTP $code" >&2; exit 1 ;; esac
done
# srvticks: the server's utime+stime in USER_HZ (100/s) ticks; fields counted after the ')'
# that ends the command name.
srvticks() { [ -n "${DS_SERVER_PID:-}" ] && awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$DS_SERVER_PID/stat"; }
srv0=$(srvticks || true)
# bash's `time` reports wrk's own CPU (user + sys), to compare the clients' costs.
TIMEFORMAT='WRKCPU %U %S'
out=$( { time WRK_PREFIX="$PREFIX" WRK_STREAMS="$N" WRK_SIZE="$SIZE" \
  wrk -t"$THREADS" -c"$CONNS" -d"$DUR" --latency -s "$HERE/wrk-append.lua" "$BASE/" 2>&1; } 2>&1)
echo "$out" | grep -v '^RESULT\|^WRKCPU' >&2
line=$(echo "$out" | grep '^RESULT') || { echo "wrk-append: no RESULT line from wrk" >&2; exit 1; }
srv1=$(srvticks || true)
cpu=$(echo "$out" | awk '/^WRKCPU/ {print $2 + $3}')
reqs=$(echo "$line" | sed 's/.* reqs=\([0-9]*\).*/\1/')
per=$(awk -v c="$cpu" -v n="$reqs" 'BEGIN { if (n > 0) printf "%.3f", c * 1e6 / n; else print 0 }')
srvper=""
if [ -n "$srv0" ] && [ -n "$srv1" ] && [ "$reqs" -gt 0 ]; then
  srvper=" server_cpu_us_per_req=$(awk -v a="$srv0" -v b="$srv1" -v n="$reqs" 'BEGIN { printf "%.3f", (b - a) * 1e4 / n }')"
fi
# Tags go right after workload= as dsbench puts them.
echo "$line client_cpu_us_per_req=$per$srvper" |
  sed "s/^RESULT workload=wrk-append/RESULT workload=wrk-append ${BENCH_TAGS:-} conns=$CONNS threads=$THREADS/; s/  */ /g"
