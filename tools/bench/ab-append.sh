#!/usr/bin/env bash
# A/B appends of two dsd builds on this machine, interleaved ABBA so that machine noise hits
# both: each round runs `dsbench append` (100 streams, 50 connections, 100 B) against a fresh
# server of each build, and records the server's CPU time per request.
# Usage: tools/bench/ab-append.sh OLD_ROOT NEW_ROOT [ROUNDS]
#   *_ROOT: a checkout with bin/dsd and tools/with-server.sh (make build); dsbench from NEW_ROOT.
# Env: AB_KIND (dsd: durable | dsd-nosync), AB_STREAMS (100), AB_DUR (6s), AB_SIMULTANEOUS=1:
#   each round runs both servers (and benches) at the same time, which of them starts first
#   alternating: on a shared machine both then meet the same noise (ratios far tighter than
#   sequential rounds'; each gets about half the machine, so absolute figures are not
#   comparable with sequential ones).
# Prints RESULT lines (server=old|new round=N ... server_cpu_us_per_req=X), then the
# geometric mean of the per-round new/old throughput ratios.
set -euo pipefail
OLD="${1:?usage: ab-append.sh OLD_ROOT NEW_ROOT [ROUNDS]}"; NEW="${2:?}"; ROUNDS="${3:-10}"
export BENCH="$NEW/bin/dsbench"
one() { # inside with-server.sh: the bench, with the server's utime+stime around it
  local c0 c1 out
  c0=$(awk '{print $14+$15}' "/proc/$DS_SERVER_PID/stat")
  out=$("$BENCH" append --duration "${AB_DUR:-6s}" --warmup 1s --conns 50 --streams "${AB_STREAMS:-100}" --size 100 --tags "$TAGS")
  c1=$(awk '{print $14+$15}' "/proc/$DS_SERVER_PID/stat")
  echo "$out" | grep RESULT | awk -v t=$((c1 - c0)) -v hz="$(getconf CLK_TCK)" \
    '{for(i=1;i<=NF;i++) if($i ~ /^reqs=/){split($i,a,"="); n=a[2]} printf "%s server_cpu_us_per_req=%.1f\n", $0, t*1e6/hz/n}'
}
export -f one
run() { local root=$OLD; [ "$1" = new ] && root=$NEW
  TAGS="server=$1 round=$2" "$root/tools/with-server.sh" "${AB_KIND:-dsd}" bash -c one 2>/dev/null; }
for r in $(seq 1 "$ROUNDS"); do
  if [ "${AB_SIMULTANEOUS:-0}" = 1 ]; then
    if [ $((r % 2)) = 1 ]; then run old "$r" & run new "$r"; else run new "$r" & run old "$r"; fi
    wait
  elif [ $((r % 2)) = 1 ]; then run old "$r"; run new "$r"; else run new "$r"; run old "$r"; fi
done | tee /dev/stderr | awk '{for(i=1;i<=NF;i++){split($i,a,"="); v[a[1]]=a[2]} rps[v["round"] "," v["server"]]=v["rps"]
    cpu[v["round"] "," v["server"]]=v["server_cpu_us_per_req"]}
  END{for(r=1;r<=1000;r++) if((r ",old") in rps && (r ",new") in rps){s+=log(rps[r ",new"]/rps[r ",old"])
        c+=log(cpu[r ",new"]/cpu[r ",old"]); n++}
      if(n) printf "pairs %d, geometric mean new/old throughput %.3f, server CPU/req %.3f\n", n, exp(s/n), exp(c/n)}'
