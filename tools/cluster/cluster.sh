#!/usr/bin/env bash
# A local 3-node dsd cluster on embedded NATS JetStream (README "Running a cluster").
# Usage: tools/cluster/cluster.sh start|stop|status|kill N|start-node N|restart N
# Env: CLUSTER_DIR (./data/cluster), DSD_BIN (bin/dsd), HTTP_PORTS (4437,4438,4439),
#      NATS_PORTS (client ports; default HTTP+10000), ROUTE_PORTS (default HTTP+20000),
#      PARTITIONS (6), ADMIN_PORTS (admin listeners; default off), DSD_FLAGS (extra flags).
# Node N (1..3) keeps its data in $CLUSTER_DIR/nN, its PID in nN.pid, the exact command that
# starts it in nN.cmd (run it with `sh -c "exec $(cat nN.cmd)"`) and its log in nN.log.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DIR="${CLUSTER_DIR:-$ROOT/data/cluster}"
BIN="${DSD_BIN:-$ROOT/bin/dsd}"
IFS=, read -r -a HP <<<"${HTTP_PORTS:-4437,4438,4439}"
IFS=, read -r -a NP <<<"${NATS_PORTS:-$((HP[0]+10000)),$((HP[1]+10000)),$((HP[2]+10000))}"
IFS=, read -r -a RP <<<"${ROUTE_PORTS:-$((HP[0]+20000)),$((HP[1]+20000)),$((HP[2]+20000))}"
ROUTES="127.0.0.1:${RP[0]},127.0.0.1:${RP[1]},127.0.0.1:${RP[2]}"

admin_port() { # node $1's admin port from ADMIN_PORTS, else '' (admin listener off)
  [ -n "${ADMIN_PORTS:-}" ] || { echo "''"; return; }
  local a; IFS=, read -r -a a <<<"$ADMIN_PORTS"; echo "${a[$(($1 - 1))]}"
}

node_cmd() { # the start command of node $1
  local i=$(($1 - 1))
  echo "$BIN --backend jetstream --addr 127.0.0.1:${HP[$i]} --data-dir $DIR/n$1 --node-id n$1" \
    "--nats-listen 127.0.0.1:${NP[$i]} --nats-cluster-listen 127.0.0.1:${RP[$i]}" \
    "--nats-routes $ROUTES --partitions ${PARTITIONS:-6} --admin-addr ${ADMIN_PORTS:+127.0.0.1:}$(admin_port "$1") ${DSD_FLAGS:-}"
}

alive() { [ -f "$DIR/n$1.pid" ] && kill -0 "$(cat "$DIR/n$1.pid")" 2>/dev/null; }

port_free() { # node $1's HTTP port takes no connection (else a clear refusal), unless n$1 runs
  local port="${HP[$(($1 - 1))]}"
  alive "$1" || ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
  echo "cluster: port $port of n$1 is in use (make run? another dsd?): stop it or set HTTP_PORTS=a,b,c" >&2
  return 1
}

start_node() {
  alive "$1" && { echo "cluster: n$1 already runs (pid $(cat "$DIR/n$1.pid"))"; return; }
  port_free "$1"
  mkdir -p "$DIR/n$1"
  node_cmd "$1" >"$DIR/n$1.cmd"
  sh -c "exec $(cat "$DIR/n$1.cmd")" >>"$DIR/n$1.log" 2>&1 &
  echo $! >"$DIR/n$1.pid"
  echo "cluster: n$1 pid $! http://127.0.0.1:${HP[$(($1 - 1))]}"
}

wait_ready() { # every node answers HTTP (the compat bucket's partition has an owner)
  local n
  for n in 1 2 3; do
    for _ in $(seq 1 600); do
      alive "$n" || { echo "cluster: n$n exited:" >&2; tail -20 "$DIR/n$n.log" >&2; return 1; }
      [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 -I "http://127.0.0.1:${HP[$((n - 1))]}/default" 2>/dev/null)" = 200 ] && break
      sleep 0.1
    done
  done
  for n in 1 2 3; do # a node that failed after another answered (a port taken meanwhile)
    alive "$n" || { echo "cluster: n$n exited:" >&2; tail -20 "$DIR/n$n.log" >&2; return 1; }
  done
}

kill_node() {
  alive "$1" || return 0
  kill -KILL "$(cat "$DIR/n$1.pid")"
  for _ in $(seq 1 50); do alive "$1" || break; sleep 0.1; done
  echo "cluster: n$1 killed (SIGKILL)"
}

stop_node() {
  alive "$1" || return 0
  local pid; pid="$(cat "$DIR/n$1.pid")"
  kill -TERM "$pid"
  for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
}

case "${1:-}" in
  start) for n in 1 2 3; do port_free "$n"; done; for n in 1 2 3; do start_node "$n"; done; wait_ready; echo "cluster: ready" ;;
  stop) for n in 1 2 3; do stop_node "$n"; done ;;
  status) for n in 1 2 3; do alive "$n" && echo "n$n up pid $(cat "$DIR/n$n.pid")" || echo "n$n down"; done ;;
  kill) kill_node "${2:?node}" ;;
  start-node) start_node "${2:?node}" ;;
  restart) kill_node "${2:?node}"; start_node "$2" ;;
  *) echo "usage: $0 start|stop|status|kill N|start-node N|restart N" >&2; exit 2 ;;
esac
