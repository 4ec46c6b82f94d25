# Sourced by tools/cluster/check.sh and bench.sh: start a 3-node cluster on free loopback
# ports under $WORK (set by the caller) with $DSD_BIN; sets NODES (URLs), N1, NATS.
start_cluster_on_free_ports() {
  local p
  mapfile -t p < <(python3 -c '
import socket
ss=[socket.socket() for _ in range(9)]
for s in ss: s.bind(("127.0.0.1",0))
for s in ss: print(s.getsockname()[1])
for s in ss: s.close()')
  export CLUSTER_DIR="$WORK/cluster"
  export HTTP_PORTS="${p[0]},${p[1]},${p[2]}" NATS_PORTS="${p[3]},${p[4]},${p[5]}" ROUTE_PORTS="${p[6]},${p[7]},${p[8]}"
  N1="http://127.0.0.1:${p[0]}"
  NODES=("$N1" "http://127.0.0.1:${p[1]}" "http://127.0.0.1:${p[2]}")
  NATS="nats://127.0.0.1:${p[3]},nats://127.0.0.1:${p[4]},nats://127.0.0.1:${p[5]}"
  "$ROOT/tools/cluster/cluster.sh" start
}
