#!/usr/bin/env bash
# One Go benchmark as bench-peers RESULT lines (issue 19: the write(2) floor and record reads
# measured in the same run as the servers). Builds PKG's test binary once per run (into
# $BENCH_OUT/bin), runs the benchmarks named BENCH (and their sub-benchmarks) for BENCHTIME
# from the package's directory, prints go test's output, then one line per (sub-)benchmark:
#   RESULT workload=gobench $BENCH_TAGS case=CASE/SUB bench=NAME iterations=N UNIT=VALUE ...
# where CASE is the case= of $BENCH_TAGS, SUB the sub-benchmark's name (conns=1000) and UNIT
# each metric's unit with '/' -> '_per_' and '-' -> '_' (ns_per_op, write_cpu_ns_per_op,
# MB_per_s, B_per_op, allocs_per_op).
# Usage: gobench.sh PKG BENCH BENCHTIME     e.g. gobench.sh ./httpd LoopbackWriteFloor 50000x
# Env: BENCH_OUT (required), BENCH_TAGS ("server=dsd round=1 case=write-floor"), GO (go).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PKG="${1:?usage: gobench.sh PKG BENCH BENCHTIME}"; BENCH="${2:?}"; BENCHTIME="${3:?}"
OUT="${BENCH_OUT:?}"
bin="$OUT/bin/$(basename "$PKG").test"
if [ ! -x "$bin" ]; then
  mkdir -p "$OUT/bin"
  (cd "$ROOT" && "${GO:-go}" test -c -o "$bin" "$PKG")
fi
tags="${BENCH_TAGS:-}"
case_name=$(sed -n 's/.*\(^\| \)case=\([^ ]*\).*/\2/p' <<<"$tags")
other_tags=$(sed 's/\(^\| \)case=[^ ]*//' <<<"$tags")
out=$(cd "$ROOT/$PKG" && "$bin" -test.run '^$' -test.bench "^Benchmark$BENCH\$" -test.benchtime "$BENCHTIME")
echo "$out"
awk -v tags="$other_tags" -v cname="${case_name:-$BENCH}" '
/^Benchmark/ && NF >= 4 && $2 ~ /^[0-9]+$/ {
  name = $1; sub(/-[0-9]+$/, "", name)
  sb = name
  if (sub(/^[^\/]*\//, "", sb) == 0) sb = ""
  c = cname; if (sb != "") c = c "/" sb
  line = "RESULT workload=gobench " tags " case=" c " bench=" name " iterations=" $2
  for (i = 3; i < NF; i += 2) { unit = $(i + 1); gsub("/", "_per_", unit); gsub("-", "_", unit); line = line " " unit "=" $i }
  print line
}' <<<"$out" | tr -s ' '
