#!/usr/bin/env bash
# Start a Durable Streams server on a free loopback port, run a command against it, stop it.
# Usage: tools/with-server.sh KIND COMMAND [ARGS...]
#   KIND: dsd (bin/dsd, temporary data dir) | node (Node reference, in memory) |
#         node-durable (Node reference, LMDB data dir) | dsd-nosync (bin/dsd --unsafe-no-sync) |
#         ceiling (bin/dsbench ceiling-server: the bare net/http handler, issue 19) |
#         caddy (the upstream Caddy server, $CADDY_BIN, file store in a temporary data dir,
#         streams under /v1/stream/; build it from the upstream repository's
#         packages/caddy-plugin with `go build ./cmd/caddy`)
# The command sees DS_BASE_URL (no trailing slash), DS_SERVER_PID, DS_SERVER_LOG and, for dsd,
# DS_ADMIN_URL (its admin listener, on a free port). Exit status: the command's.
# Env: PEER_DIR (.peers), DS_LONGPOLL_MS (500), DSD_FLAGS (extra dsd flags), CADDY_BIN, KEEP_DATA=1.
set -euo pipefail
KIND="${1:?usage: with-server.sh dsd|dsd-nosync|node|node-durable|ceiling|caddy COMMAND...}"; shift
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PEER_DIR="${PEER_DIR:-$ROOT/.peers}"
LP_MS="${DS_LONGPOLL_MS:-500}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/ds-server.XXXXXX")"
LOG="$WORK/server.log"
cleanup() {
  if [ -n "${SPID:-}" ] && kill -0 "$SPID" 2>/dev/null; then
    kill -TERM "$SPID" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$SPID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$SPID" 2>/dev/null || true
  fi
  [ "${KEEP_DATA:-0}" = 1 ] && echo "with-server: kept $WORK" >&2 || rm -rf "$WORK"
}
trap cleanup EXIT
case "$KIND" in
  dsd|dsd-nosync)
    [ -x "$ROOT/bin/dsd" ] || { echo "with-server: bin/dsd missing (make build)" >&2; exit 2; }
    nosync=""
    [ "$KIND" = dsd-nosync ] && nosync=--unsafe-no-sync
    # shellcheck disable=SC2086
    "$ROOT/bin/dsd" --addr 127.0.0.1:0 --admin-addr 127.0.0.1:0 --data-dir "$WORK/data" --long-poll-timeout "${LP_MS}ms" \
      $nosync ${DSD_FLAGS:-} >"$LOG" 2>&1 &
    SPID=$! ;;
  ceiling)
    [ -x "$ROOT/bin/dsbench" ] || { echo "with-server: bin/dsbench missing (make build)" >&2; exit 2; }
    "$ROOT/bin/dsbench" ceiling-server --addr 127.0.0.1:0 >"$LOG" 2>&1 &
    SPID=$! ;;
  node|node-durable)
    [ -f "$PEER_DIR/node_modules/@durable-streams/server/package.json" ] ||
      { echo "with-server: peers not installed (make peers-install)" >&2; exit 2; }
    extra=()
    [ "$KIND" = node-durable ] && extra=(DS_DATA_DIR="$WORK/data")
    (cd "$PEER_DIR" && exec env DS_PORT=0 DS_LONGPOLL_MS="$LP_MS" "${extra[@]}" node node-server.mjs) >"$LOG" 2>&1 &
    SPID=$! ;;
  caddy)
    [ -n "${CADDY_BIN:-}" ] && [ -x "$CADDY_BIN" ] ||
      { echo "with-server: set CADDY_BIN to the upstream Caddy server binary" >&2; exit 2; }
    # Caddy logs no address for an explicit port: pick a free one, then wait for it.
    PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    mkdir -p "$WORK/data"
    cat >"$WORK/Caddyfile" <<EOF
{
	admin off
	auto_https off
	persist_config off
}
http://127.0.0.1:$PORT {
	route /v1/stream/* {
		durable_streams {
			data_dir $WORK/data
			long_poll_timeout ${LP_MS}ms
		}
	}
}
EOF
    (cd "$WORK" && exec env HOME="$WORK" XDG_DATA_HOME="$WORK" XDG_CONFIG_HOME="$WORK" \
      "$CADDY_BIN" run --config "$WORK/Caddyfile" --adapter caddyfile) >"$LOG" 2>&1 &
    SPID=$! ;;
  *) echo "with-server: unknown kind $KIND" >&2; exit 2 ;;
esac
URL=""
for _ in $(seq 1 300); do
  if [ "$KIND" = caddy ]; then
    (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && URL="http://127.0.0.1:$PORT"
  else
    URL="$(grep -o 'listening on http://[0-9.:]*' "$LOG" 2>/dev/null | head -1 | sed 's/^listening on //')" || true
  fi
  [ -n "$URL" ] && break
  kill -0 "$SPID" 2>/dev/null || { echo "with-server: $KIND exited during start-up:" >&2; cat "$LOG" >&2; exit 2; }
  sleep 0.1
done
[ -n "$URL" ] || { echo "with-server: $KIND did not report its address:" >&2; cat "$LOG" >&2; exit 2; }
echo "with-server: $KIND at $URL (pid $SPID)" >&2
ADMIN_URL=""
if [ "$KIND" = dsd ] || [ "$KIND" = dsd-nosync ]; then # logged right after the main address
  for _ in $(seq 1 50); do
    ADMIN_URL="$(grep -o 'admin listening on http://[0-9.:]*' "$LOG" | head -1 | sed 's/^admin listening on //')" || true
    [ -n "$ADMIN_URL" ] && break
    sleep 0.1
  done
fi
set +e
DS_ADMIN_URL="$ADMIN_URL" DS_BASE_URL="$URL" DS_SERVER_PID="$SPID" DS_SERVER_LOG="$LOG" "$@"
rc=$?
set -e
if [ $rc -ne 0 ]; then echo "with-server: command failed ($rc); last server log lines:" >&2; tail -20 "$LOG" >&2; fi
exit $rc
